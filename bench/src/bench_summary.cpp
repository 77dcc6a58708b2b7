#include "sfc/bench_summary.hpp"

#include <algorithm>
#include <string>

namespace sfc {

double weighted_harmonic_mean_gflops(const std::vector<double>& flops, const std::vector<double>& seconds) {
  if (flops.size() != seconds.size())
    throw Error("weighted harmonic mean: " + std::to_string(flops.size()) + " flop counts but " +
                std::to_string(seconds.size()) + " times");
  if (flops.empty()) throw Error("weighted harmonic mean of no measurements");
  double total_flops = 0, total_seconds = 0;
  for (std::size_t i = 0; i < flops.size(); ++i) {
    if (!(seconds[i] > 0)) throw Error("weighted harmonic mean: a time is not positive");
    total_flops += flops[i];
    total_seconds += seconds[i];
  }
  return total_flops / total_seconds / 1e9;
}

double gflops(const GemmShape& shape, const Timing& timing, Statistic statistic) {
  const double seconds = timing.seconds(statistic);
  return seconds > 0 ? shape.flops() / seconds / 1e9 : 0.0;
}

BenchSummary summarize(const BenchResult& result) {
  const std::size_t implementations = result.implementations.size();
  BenchSummary summary;
  for (std::size_t i = 0; i < implementations; ++i) {
    std::vector<double> flops, seconds;
    for (const ShapeMeasurement& s : result.shapes) {
      flops.push_back(s.shape.flops());
      seconds.push_back(s.timings.at(i).seconds(result.statistic));
    }
    summary.whm_gflops.push_back(weighted_harmonic_mean_gflops(flops, seconds));
  }
  for (std::size_t i = 0; i < implementations; ++i)
    summary.ratio_vs.push_back(summary.whm_gflops[0] / summary.whm_gflops[i]);

  // Implementation 0 is SFC-CA; the peers follow (those in_peer_ratio names).
  const auto counts = [&](std::size_t i) {
    return result.in_peer_ratio.size() == implementations ? bool(result.in_peer_ratio[i]) : i > 0;
  };
  for (std::size_t i = 1; i < implementations; ++i)
    if (counts(i) && (!summary.best_peer || summary.whm_gflops[i] > summary.whm_gflops[*summary.best_peer]))
      summary.best_peer = i;
  if (summary.best_peer) summary.ratio_vs_best_peer = summary.ratio_vs[*summary.best_peer];

  const std::size_t passes = result.shapes.empty() ? 0 : result.shapes[0].passes.size();
  const bool by_pass =
      std::all_of(result.shapes.begin(), result.shapes.end(), [&](const ShapeMeasurement& s) {
        return s.passes.size() == passes &&
               std::all_of(s.passes.begin(), s.passes.end(),
                           [&](const std::vector<Timing>& pass) { return pass.size() == implementations; });
      });
  if (summary.best_peer && by_pass)
    for (std::size_t p = 0; p < passes; ++p) {
      std::vector<double> flops, ours, theirs;
      for (const ShapeMeasurement& s : result.shapes) {
        flops.push_back(s.shape.flops());
        ours.push_back(s.passes[p][0].seconds(result.statistic));
        theirs.push_back(s.passes[p][*summary.best_peer].seconds(result.statistic));
      }
      summary.pass_ratios_vs_best_peer.push_back(weighted_harmonic_mean_gflops(flops, ours) /
                                                 weighted_harmonic_mean_gflops(flops, theirs));
    }

  for (const ShapeMeasurement& s : result.shapes) {
    std::optional<double> ratio;
    if (summary.best_peer) {
      double best = 0;
      for (std::size_t i = 1; i < implementations; ++i)
        if (counts(i)) best = std::max(best, gflops(s.shape, s.timings.at(i), result.statistic));
      ratio = gflops(s.shape, s.timings.at(0), result.statistic) / best;
      summary.min_shape_ratio = std::min(summary.min_shape_ratio.value_or(*ratio), *ratio);
    }
    summary.shape_ratio_vs_best_peer.push_back(ratio);
  }
  return summary;
}

double highest_measured_gflops(const BenchResult& result) {
  double highest = 0;
  for (const ShapeMeasurement& s : result.shapes)
    for (const Timing& t : s.timings) highest = std::max(highest, gflops(s.shape, t, Statistic::min));
  return highest;
}

}  // namespace sfc
