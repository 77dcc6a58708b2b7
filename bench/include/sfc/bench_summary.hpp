// The figures a benchmark is judged by: the weighted harmonic mean (WHM) of
// throughput per implementation, sum of flops over sum of times (paper,
// section IV; each time the result's statistic), and SFC-CA's ratios to the peers.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "sfc/bench.hpp"

namespace sfc {

// sum(flops) / sum(seconds) / 1e9; throws sfc::Error if the lists differ in
// length, are empty, or a time is not positive.
double weighted_harmonic_mean_gflops(const std::vector<double>& flops, const std::vector<double>& seconds);

// GFLOP/s of one timed shape: its flops over the timing's `statistic`.
double gflops(const GemmShape& shape, const Timing& timing, Statistic statistic);

struct BenchSummary {
  std::vector<double> whm_gflops;  // per implementation, BenchResult order
  // SFC-CA's WHM over each implementation's (index 0, SFC-CA itself: 1).
  std::vector<double> ratio_vs;
  // Implementation index of the peer with the highest WHM among those
  // BenchResult::in_peer_ratio counts; none without such peers.
  std::optional<std::size_t> best_peer;
  std::optional<double> ratio_vs_best_peer;  // SFC-CA WHM / best peer's WHM
  // The same ratio within each pass (ShapeMeasurement::passes; against the
  // whole run's best peer): its spread is what the machine's noise does to
  // the figure, shown in the run itself. Empty without peers, or when the
  // shapes were not timed in the same number of passes.
  std::vector<double> pass_ratios_vs_best_peer;
  // Per shape: SFC-CA's GFLOP/s over the fastest counted peer's on that shape.
  std::vector<std::optional<double>> shape_ratio_vs_best_peer;
  std::optional<double> min_shape_ratio;
};

BenchSummary summarize(const BenchResult& result);

// The highest rate any implementation reached on any shape, from its fastest
// run (whatever the result's statistic): what a measured peak must not be below.
double highest_measured_gflops(const BenchResult& result);

}  // namespace sfc
