// The records every layer passes around: one timed configuration of a shape
// (Measurement) and the fastest of a shape (Winner). The tuner makes them, the
// store keeps them (db/), exports carry them; none of that is needed to use them.
#pragma once
#include <string>

#include "sfc/gemm.hpp"

namespace sfc {

// One timed configuration of one shape (the platform is the store's key).
struct Measurement {
  GemmShape shape;
  DType dtype = DType::f32;
  int threads = 0;
  Layout layout = Layout::blocked;       // the entry timed: execute() on blocks, or gemm() on plain matrices
  int k_layers = 0, k_block_factor = 0;  // as requested
  int effective_k_layers = 0, effective_k_block_factor = 0;  // after the plan clamped them
  BlockSizes blocks;
  int warmup = 0, reps = 0;
  double mean_s = 0, min_s = 0, stddev_s = 0;
  bool screening = false;   // pruning's one cheap repetition, not a full measurement
  std::string measured_at;  // ISO-8601 UTC, see utc_timestamp()
};

// The fastest fully measured configuration of one shape (the `winners` view).
struct Winner {
  GemmShape shape;
  DType dtype = DType::f32;
  int threads = 0;
  Layout layout = Layout::blocked;
  int k_layers = 0, k_block_factor = 0;
  // Pooled over every full measurement of the configuration; min_s, its
  // fastest run, is its time (the winning rule, see sfc/tuner.hpp).
  double mean_s = 0, min_s = 0;
  int reps = 0;  // timed runs behind mean_s
};

// "2025-01-31T12:00:00.123456Z": the time stamps the store keeps.
std::string utc_timestamp();

}  // namespace sfc
