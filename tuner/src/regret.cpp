// Regret evaluation and the train/test splits behind `sfc-tune evaluate`.
#include "sfc/regret.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "sfc/error.hpp"

namespace sfc {
namespace {

constexpr std::size_t predictor_count = all_predictors.size();

std::string describe(const TunedShape& t) {
  return to_string(t.shape) + " " + std::string(to_string(t.dtype)) + " on " + std::to_string(t.threads) +
         " threads";
}

// Linear interpolation between the closest ranks of sorted `v` (NumPy's default).
double quantile(const std::vector<double>& v, double q) {
  const double pos = q * double(v.size() - 1);
  const std::size_t lo = std::size_t(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, DType, int, Layout>;
ShapeKey key_of(const TunedShape& t) {
  return {t.shape.m, t.shape.n, t.shape.k, t.dtype, t.threads, t.layout};
}

}  // namespace

RegretSummary summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()), quantile(v, 0.5), quantile(v, 0.95),
          v.back()};
}

RegretReport evaluate_regret(const ConfigPredictor& predictor, std::vector<TunedShape> tests,
                             const ConfigTimer& time_missing) {
  if (tests.empty()) throw Error("no test shapes to evaluate");
  RegretReport report;
  std::array<std::vector<double>, predictor_count> regrets;
  for (TunedShape& t : tests) {
    if (!std::isfinite(best_seconds(t))) throw Error("test shape " + describe(t) + " has no measurement");
    ShapeRegret s;
    std::array<bool, predictor_count> answered{};
    std::array<double, predictor_count> seconds{};
    double timed_now = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < predictor_count; ++i) {
      try {
        if (all_predictors[i] == Predictor::policy) {
          const Answer a = predictor.query(t.shape, t.dtype, t.threads, t.layout);
          s.knobs[i] = a.knobs;
          s.policy_tier = a.tier;
          s.distance = a.distance;
        } else {
          s.knobs[i] = predictor.predict(all_predictors[i], t.shape, t.dtype, t.threads, t.layout);
        }
        answered[i] = true;
      } catch (const Error&) {
        // The model without calibration, the neighbour rules without tuned
        // shapes of this thread count: that predictor has no answer here.
        if (all_predictors[i] == Predictor::policy) throw;
      }
      if (!answered[i]) continue;
      float& stored = t.seconds[s.knobs[i].index()];
      if (!(stored > 0)) {  // kept in `t`, so a configuration is timed once per shape
        stored = float(time_missing(t.shape, t.dtype, t.threads, t.layout, s.knobs[i]));
        timed_now = std::min(timed_now, double(stored));
      }
      seconds[i] = stored;
    }
    // Against the winner, or a configuration timed just now if that was faster.
    const double best = std::min(best_seconds(t), timed_now);
    for (std::size_t i = 0; i < predictor_count; ++i) {
      s.regret[i] = std::numeric_limits<double>::quiet_NaN();
      if (!answered[i]) continue;
      // A pruned configuration's single screening run can beat the winner's
      // mean by luck; no prediction is better than the best, so that is 0.
      s.regret[i] = std::max(0.0, seconds[i] / best - 1);
      regrets[i].push_back(s.regret[i]);
    }
    ++report.tier_counts[std::size_t(s.policy_tier)];
    s.test = t;
    report.shapes.push_back(s);
  }
  for (std::size_t i = 0; i < predictor_count; ++i)
    if (regrets[i].size() == tests.size()) report.summary[i] = summarise(regrets[i]);
  return report;
}

std::optional<NoiseFloor> noise_floor(const std::vector<TunedShape>& tests,
                                      const std::vector<TunedShape>& again) {
  std::map<ShapeKey, Knobs> winners;
  for (const TunedShape& a : again) winners.emplace(key_of(a), a.winner());
  std::vector<double> regrets;
  for (const TunedShape& t : tests) {
    const auto it = winners.find(key_of(t));
    if (it == winners.end()) continue;
    const float seconds = t.seconds[it->second.index()];
    if (!(seconds > 0)) continue;
    regrets.push_back(std::max(0.0, seconds / best_seconds(t) - 1));
  }
  if (regrets.empty()) return std::nullopt;
  return NoiseFloor{summarise(regrets), regrets.size()};
}

HeldOut hold_out(std::vector<TuningTable> tables, DType dtype, int threads, Layout layout, double fraction,
                 std::uint64_t seed) {
  if (!(fraction > 0 && fraction < 1))
    throw Error("the held-out fraction must be between 0 and 1, got " + std::to_string(fraction));
  std::vector<ShapeKey> candidates;
  for (const TuningTable& table : tables)
    for (const TunedShape& s : table.shapes)
      if (s.dtype == dtype && s.threads == threads && s.layout == layout) candidates.push_back(key_of(s));
  if (candidates.size() < 2)
    throw Error("holding out needs at least 2 tuned " + std::string(to_string(dtype)) + " shapes on " +
                std::to_string(threads) + " threads (" + std::string(to_string(layout)) +
                " layout), the tables have " + std::to_string(candidates.size()));
  std::mt19937_64 random(seed);
  std::shuffle(candidates.begin(), candidates.end(), random);
  const std::size_t count = std::clamp<std::size_t>(
      std::size_t(std::lround(fraction * double(candidates.size()))), 1, candidates.size() - 1);
  const std::set<ShapeKey> chosen(candidates.begin(), candidates.begin() + std::ptrdiff_t(count));

  HeldOut split;
  for (TuningTable& table : tables) {
    std::erase_if(table.shapes, [&](const TunedShape& s) {
      if (!chosen.contains(key_of(s))) return false;
      split.tests.push_back(s);
      return true;
    });
  }
  split.training = std::move(tables);
  return split;
}

HeldOut hold_out_range(std::vector<TuningTable> tables, std::optional<std::vector<TunedShape>> tests,
                       DType dtype, int threads, Layout layout, std::int64_t max_dimension) {
  const auto inside = [max_dimension](const TunedShape& s) {
    return std::max({s.shape.m, s.shape.n, s.shape.k}) <= max_dimension;
  };
  const auto wanted = [&](const TunedShape& s) {
    return s.dtype == dtype && s.threads == threads && s.layout == layout;
  };
  HeldOut split;
  for (TuningTable& table : tables)
    std::erase_if(table.shapes, [&](const TunedShape& s) {
      if (inside(s)) return false;
      if (!tests && wanted(s)) split.tests.push_back(s);
      return true;
    });
  if (tests)
    for (TunedShape& t : *tests)
      if (!inside(t) && wanted(t)) split.tests.push_back(std::move(t));
  const std::string what = std::string(to_string(dtype)) + " shapes on " + std::to_string(threads) +
                           " threads (" + std::string(to_string(layout)) + " layout)";
  if (split.tests.empty())
    throw Error("no tuned " + what + " with a dimension beyond " + std::to_string(max_dimension) +
                " to test on");
  const bool trained = std::any_of(tables.begin(), tables.end(), [&](const TuningTable& t) {
    return std::any_of(t.shapes.begin(), t.shapes.end(), wanted);
  });
  if (!trained) throw Error("no tuned " + what + " within " + std::to_string(max_dimension) + " to train on");
  split.training = std::move(tables);
  return split;
}

HeldOut exclude_tests(std::vector<TuningTable> tables, std::vector<TunedShape> tests) {
  std::set<ShapeKey> tested;
  for (const TunedShape& t : tests) tested.insert(key_of(t));
  for (TuningTable& table : tables)
    std::erase_if(table.shapes, [&](const TunedShape& s) { return tested.contains(key_of(s)); });
  return {std::move(tables), std::move(tests)};
}

}  // namespace sfc
