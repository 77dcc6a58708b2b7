// Regret of the predictors on shapes they were not built from: for each test
// shape, time(predicted configuration) / time(best configuration) - 1, where
// the best is the fastest of the shape's measured configurations.
//
//   HeldOut split = hold_out(tables, DType::f32, 2, 0.2, seed);
//   ConfigPredictor predictor(split.training);
//   RegretReport report = evaluate_regret(predictor, split.tests, timer);
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sfc/predictor.hpp"

namespace sfc {

inline constexpr std::array<Predictor, 4> all_predictors = {Predictor::nearest, Predictor::vote,
                                                            Predictor::model, Predictor::policy};

struct RegretSummary {
  double mean = 0, median = 0, p95 = 0, max = 0;  // fractions: 0.02 = 2% slower than the best
};

// Mean, median, p95 and max of `regrets` (not empty); quantiles interpolate
// linearly between the closest ranks, as NumPy's default does.
RegretSummary summarise(std::vector<double> regrets);

struct ShapeRegret {
  TunedShape test;
  // By position in all_predictors; regret NaN where the predictor could not
  // answer (no calibration for the model, no tuned shapes of the thread
  // count for the neighbour rules).
  std::array<Knobs, all_predictors.size()> knobs;
  std::array<double, all_predictors.size()> regret;
  Tier policy_tier = Tier::default_config;
  double distance = 0;  // log2 distance to the nearest training shape (+infinity: none)
};

struct RegretReport {
  std::vector<ShapeRegret> shapes;
  // By position in all_predictors; empty for a predictor that could not answer.
  std::array<std::optional<RegretSummary>, all_predictors.size()> summary;
  std::array<int, 4> tier_counts{};  // shapes the policy answered per Tier
};

// Times one configuration of a shape, for test shapes where the predicted
// configuration was not measured (seconds; same protocol as the tuner).
using ConfigTimer = std::function<double(const GemmShape&, DType, int threads, Layout, Knobs)>;

// Throws sfc::Error when `tests` is empty or a test shape has no measurement.
RegretReport evaluate_regret(const ConfigPredictor& predictor, std::vector<TunedShape> tests,
                             const ConfigTimer& time_missing);

// The noise floor of an evaluation: the regret, by the test shapes' own
// times, of the winners of `again` -- the same shapes tuned a second time, on
// their own. Those answers are perfect by one timing, so what they lose by the
// other is what measurement noise alone costs, and no predictor scored on the
// same times can be expected to do better. Test shapes that `again` lacks, or
// whose winner there the test did not time (pruned), are left out; `shapes`
// says how many counted. Nullopt when none did.
struct NoiseFloor {
  RegretSummary summary;
  std::size_t shapes = 0;
};
std::optional<NoiseFloor> noise_floor(const std::vector<TunedShape>& tests,
                                      const std::vector<TunedShape>& again);

// Training tables and test shapes for an evaluation.
struct HeldOut {
  std::vector<TuningTable> training;
  std::vector<TunedShape> tests;
};

// Moves `fraction` (0 < fraction < 1) of the tuned shapes of (dtype, threads,
// layout), drawn with `seed`, from the tables into the tests (at least one each way).
HeldOut hold_out(std::vector<TuningTable> tables, DType dtype, int threads, Layout layout, double fraction,
                 std::uint64_t seed);

// Drops from the tables every shape that is also a test shape (same shape,
// dtype, threads and layout), so that no predictor sees the answer.
HeldOut exclude_tests(std::vector<TuningTable> tables, std::vector<TunedShape> tests);

// A range hold-out: trains on the shapes whose M, N and K are all at most
// `max_dimension` and tests on those of (dtype, threads, layout) with a
// dimension beyond it -- the shapes of `tests` when given, else the tables'
// own. Throws sfc::Error when either side is empty.
HeldOut hold_out_range(std::vector<TuningTable> tables, std::optional<std::vector<TunedShape>> tests,
                       DType dtype, int threads, Layout layout, std::int64_t max_dimension);

}  // namespace sfc
