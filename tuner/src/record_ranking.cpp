#include "sfc/record_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "sfc/analytical_model.hpp"

namespace sfc {
namespace {

// The model's time for one call: its best K_layers (the engine clamps the others).
double model_seconds(const AnalyticalModel& model, const RecordKey& key) {
  const ModelPrediction p = model.predict(key.shape(), key.dtype, key.threads, key.layout);
  double best = std::numeric_limits<double>::infinity();
  for (const double s : p.seconds)
    if (std::isfinite(s)) best = std::min(best, s);
  return std::isfinite(best) ? best : 0;
}

}  // namespace

RecordRanking rank_record(const ShapeRecord& record, const std::vector<TuningTable>& tables,
                          const Platform& here) {
  // One model per thread count: a table's calibration when it has one.
  std::map<int, std::pair<AnalyticalModel, bool>> models;
  auto model_for = [&](int threads) -> const std::pair<AnalyticalModel, bool>& {
    if (const auto found = models.find(threads); found != models.end()) return found->second;
    for (const TuningTable& t : tables)
      if (t.platform.threads == threads && AnalyticalModel(t.calibration, t.platform.l2_bytes).calibrated())
        return models.emplace(threads, std::pair(AnalyticalModel(t.calibration, t.platform.l2_bytes), true))
            .first->second;
    return models.emplace(threads, std::pair(AnalyticalModel(kNominalCalibration, here.l2_bytes), false))
        .first->second;
  };

  RecordRanking ranking;
  for (const RecordedShape& s : record.shapes()) {
    const auto& [model, calibrated] = model_for(s.key.threads);
    RankedShape ranked{s, model_seconds(model, s.key), 0, calibrated};
    ranking.total_seconds += ranked.seconds_per_call * double(s.calls);
    ranking.shapes.push_back(ranked);
  }
  for (RankedShape& r : ranking.shapes)
    r.share =
        ranking.total_seconds > 0 ? r.seconds_per_call * double(r.recorded.calls) / ranking.total_seconds : 0;
  // Largest share first; equal shares (zero calls) by key, so the order is stable.
  std::sort(ranking.shapes.begin(), ranking.shapes.end(), [](const RankedShape& a, const RankedShape& b) {
    if (a.share != b.share) return a.share > b.share;
    return a.recorded.key < b.recorded.key;
  });
  return ranking;
}

std::vector<TuningTarget> RecordRanking::tuning_targets() const {
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, DType, int, Layout>;
  std::map<Key, std::size_t> index;
  std::vector<TuningTarget> targets;
  std::vector<std::uint64_t> tier_calls;  // calls of the key whose tier a target shows
  for (const RankedShape& r : shapes) {
    const RecordKey& k = r.recorded.key;
    const auto [at, added] =
        index.try_emplace(Key{k.m, k.n, k.k, k.dtype, k.threads, k.layout}, targets.size());
    if (added) {
      targets.push_back({k.shape(), k.dtype, k.threads, k.layout, 0, 0, r.recorded.tier});
      tier_calls.push_back(0);
    }
    TuningTarget& t = targets[at->second];
    t.calls += r.recorded.calls;
    t.share += r.share;
    if (r.recorded.calls > tier_calls[at->second]) {
      tier_calls[at->second] = r.recorded.calls;
      t.tier = r.recorded.tier;
    }
  }
  std::stable_sort(targets.begin(), targets.end(), [](const TuningTarget& a, const TuningTarget& b) {
    if (a.share != b.share) return a.share > b.share;
    return a.shape.flops() > b.shape.flops();
  });
  return targets;
}

}  // namespace sfc
