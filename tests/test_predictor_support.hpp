// Synthetic tuning tables for the predictor tests: every configuration of a
// shape gets a time that grows with its distance from the chosen winner, so
// winners and votes are known in advance.
#pragma once
#include <cmath>
#include <cstdlib>
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/platform.hpp"
#include "sfc/tuning_store.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc::test {

// Time of (kl, kbf) on a shape whose winner is `w`: the shape's FLOPs at 100
// GFLOP/s, 4% slower per step away from the winner along either knob.
inline TunedShape synthetic_shape(GemmShape shape, Knobs w, int threads = 2, DType dtype = DType::f32) {
  TunedShape s;
  s.shape = shape;
  s.dtype = dtype;
  s.threads = threads;
  s.k_layers = w.k_layers;
  s.k_block_factor = w.k_block_factor;
  for (int kl = 1; kl <= kMaxKLayers; ++kl)
    for (int kbf = 1; kbf <= kMaxKBlockFactor; ++kbf) {
      const int steps = std::abs(kl - w.k_layers) + std::abs(kbf - w.k_block_factor);
      s.seconds[config_index(kl, kbf)] = float(shape.flops() / 1e11 * (1 + 0.04 * steps));
    }
  return s;
}

// This machine's hardware with another ISA and a four times larger L2: a
// foreign platform, whose results are refused unless forced.
inline Platform foreign_machine(int threads = 2) {
  Platform p = detect_platform(threads);
  p.cpu_model = "Some Other CPU";
  p.isa = p.isa == "hsw" ? "skx" : "hsw";
  p.l2_bytes *= 4;
  return p;
}

// Another model of this machine's kind (another CPU name and core count, the
// same ISA and caches): a compatible platform.
inline Platform compatible_machine(int threads = 2) {
  Platform p = detect_platform(threads);
  p.cpu_model = "A Sibling CPU";
  p.cores *= 8;
  return p;
}

// A platform with the fields the predictors read: threads and L2.
inline TuningTable synthetic_table(std::vector<TunedShape> shapes, Calibration calibration = {},
                                   int threads = 2) {
  TuningTable t;
  t.platform.cpu_model = "synthetic";
  t.platform.cores = threads;
  t.platform.threads = threads;
  t.platform.l2_bytes = 1 << 20;
  t.calibration = calibration;
  t.shapes = std::move(shapes);
  return t;
}

// 27 shapes, {256, 1024, 4096}^3 on 2 threads, whose winners follow K:
// K >= 4096 -> (2, 4), otherwise (1, 2).
inline std::vector<TunedShape> region_shapes() {
  std::vector<TunedShape> shapes;
  for (std::int64_t m : {256, 1024, 4096})
    for (std::int64_t n : {256, 1024, 4096})
      for (std::int64_t k : {256, 1024, 4096})
        shapes.push_back(synthetic_shape({m, n, k}, k >= 4096 ? Knobs{2, 4} : Knobs{1, 2}));
  return shapes;
}

// Records every configuration of `shapes` in `store` as full measurements of
// `platform` (which it adds), as the tuner would have.
inline void record_synthetic(TuningStore& store, const Platform& platform,
                             const std::vector<TunedShape>& shapes) {
  store.upsert_platform(platform);
  std::vector<Measurement> rows;
  for (const TunedShape& s : shapes)
    for (int kl = 1; kl <= kMaxKLayers; ++kl)
      for (int kbf = 1; kbf <= kMaxKBlockFactor; ++kbf) {
        Measurement m;
        m.shape = s.shape;
        m.dtype = s.dtype;
        m.threads = s.threads;
        m.layout = s.layout;
        m.k_layers = m.effective_k_layers = kl;
        m.k_block_factor = m.effective_k_block_factor = kbf;
        m.blocks = choose_blocks(s.shape, s.dtype, s.threads);
        m.warmup = 1;
        m.reps = 5;
        m.mean_s = m.min_s = s.seconds[config_index(kl, kbf)];
        m.measured_at = utc_timestamp();
        rows.push_back(m);
      }
  store.record(platform.hash(), rows);
}

}  // namespace sfc::test
