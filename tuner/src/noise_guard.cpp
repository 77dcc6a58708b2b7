// The tuner's noise guard (see sfc/noise_guard.hpp).
#include "sfc/noise_guard.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "sfc/records.hpp"
#include "sfc/tuning_session.hpp"

namespace sfc {

std::optional<double> read_load_average(const std::string& path) {
  std::ifstream in(path);
  double load = 0;
  if (!(in >> load) || !(load >= 0)) return std::nullopt;
  return load;
}

NoiseVerdict judge_noise(std::span<const Timing> timings, std::optional<double> load_before,
                         std::optional<double> load_after, int cores, double spread_limit) {
  NoiseVerdict v;
  v.cores = cores;
  for (const Timing& t : timings) {
    if (t.reps < kNoiseMinReps || !(t.mean > 0)) continue;
    const double spread = t.stddev / t.mean;
    v.worst_spread = std::max(v.worst_spread, spread);
    if (spread > spread_limit) ++v.spread_configs;
  }
  v.noisy = v.spread_configs > 0;
  v.load = std::max(load_before.value_or(0), load_after.value_or(0));
  v.busy = cores > 0 && v.load > double(cores);
  return v;
}

std::string NoiseVerdict::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "runs of %d configuration%s spread up to %.0f%%", spread_configs,
                spread_configs == 1 ? "" : "s", 100 * worst_spread);
  std::string out = noisy ? text : "runs steady";
  if (load > 0) {
    std::snprintf(text, sizeof text, "; load %.1f on %d cores%s", load, cores, busy ? " (busy)" : "");
    out += text;
  }
  return out;
}

NoiseVerdict judge_shape_noise(std::span<const Measurement> measurements, std::optional<double> load_before,
                               int cores) {
  std::vector<Timing> timings;
  for (const Measurement& m : measurements)
    if (!m.screening)
      timings.push_back({.mean = m.mean_s, .min = m.min_s, .stddev = m.stddev_s, .reps = m.reps});
  return judge_noise(timings, load_before, read_load_average(), cores);
}

void note_noise(SessionSummary& summary, const GemmShape& shape, const NoiseVerdict& verdict) {
  summary.busy = summary.busy || verdict.busy;
  summary.peak_load = std::max(summary.peak_load, verdict.load);
  if (verdict.noisy) summary.noisy_shapes.push_back(to_string(shape) + ": " + verdict.describe());
}

}  // namespace sfc
