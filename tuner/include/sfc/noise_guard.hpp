// The noise guard of tuning: whether a shape's timings can be trusted, from
// the spread of each configuration's runs and the machine's load while they
// ran. tune_grid times a noisy shape again once (the store keeps both: a
// configuration's time is its fastest run of all); still noisy, it is listed
// in the session summary, and a run on a busy machine says so instead of
// storing noise as winners silently.
#pragma once
#include <optional>
#include <span>
#include <string>

#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"

namespace sfc {

// A configuration's runs spread too far when their sample standard deviation
// exceeds this share of their mean: the criterion bench marks noisy shapes by
// (sfc/bench_report.hpp, kNoisyVariation).
inline constexpr double kNoiseSpreadLimit = 0.25;
// The timed runs a configuration needs before its spread counts: the sample
// standard deviation of two runs says too little to time a shape again for
// (and `tune --reps 2` on a loaded machine would then tune every shape twice).
inline constexpr int kNoiseMinReps = 3;

// The 1-minute load average of /proc/loadavg (or of `path`); nothing when it
// cannot be read or parsed (not Linux, a container without /proc).
std::optional<double> read_load_average(const std::string& path = "/proc/loadavg");

struct NoiseVerdict {
  bool noisy = false;       // a configuration's runs spread beyond the limit
  bool busy = false;        // the load average exceeded the cores, before or after
  int spread_configs = 0;   // the configurations whose runs spread beyond the limit
  double worst_spread = 0;  // the largest stddev / mean among them all
  double load = 0;          // the larger of the two load averages read (0: unknown)
  int cores = 0;
  std::string describe() const;  // "runs of 3 configurations spread up to 41%; load 3.2 on 2 cores (busy)"
};

// Judges a shape's `timings` (one per configuration; those of fewer than
// kNoiseMinReps runs count as steady), with the load averages read
// before and after them and the machine's `cores`.
NoiseVerdict judge_noise(std::span<const Timing> timings, std::optional<double> load_before,
                         std::optional<double> load_after, int cores,
                         double spread_limit = kNoiseSpreadLimit);

struct Measurement;
struct SessionSummary;

// judge_noise over the full (not screening) `measurements` of one shape just
// tuned, with the load read before them (`load_before`) and now.
NoiseVerdict judge_shape_noise(std::span<const Measurement> measurements, std::optional<double> load_before,
                               int cores);

// Notes `verdict` of `shape` in `summary`: a noisy shape is listed, a busy
// machine and its load kept.
void note_noise(SessionSummary& summary, const GemmShape& shape, const NoiseVerdict& verdict);

}  // namespace sfc
