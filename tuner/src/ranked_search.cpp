#include "sfc/ranked_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sfc {

RankingContext::RankingContext(std::optional<AnalyticalModel> model, RankingOptions options)
    : model_(std::move(model)), options_(options) {
  if (model_ && !model_->calibrated()) model_.reset();
}

void RankingContext::add(const GemmShape& shape, const std::array<double, kConfigCount>& seconds,
                         bool foreign) {
  (foreign ? foreign_ : tuned_).push_back({.shape = shape, .seconds = seconds, .foreign = foreign});
}

void RankingContext::add(const GemmShape& shape, std::span<const Measurement> measurements) {
  std::array<double, kConfigCount> full, screen;
  full.fill(NAN);
  screen.fill(NAN);
  for (const Measurement& m : measurements) {
    double& s = (m.screening ? screen : full)[std::size_t(config_index(m.k_layers, m.k_block_factor))];
    s = std::isnan(s) ? m.min_s : std::min(s, m.min_s);
  }
  for (int i = 0; i < kConfigCount; ++i)
    if (std::isnan(full[std::size_t(i)])) full[std::size_t(i)] = screen[std::size_t(i)];
  add(shape, full);
}

double RankingContext::model_regret(std::span<const RankingNeighbour> near, DType dtype, int threads,
                                    Layout layout) const {
  if (!model_) return 0;
  double sum = 0;
  int count = 0;
  for (const RankingNeighbour& n : near) {
    std::vector<double> known;
    for (double v : n.seconds)
      if (std::isfinite(v)) known.push_back(v);
    if (known.empty()) continue;
    std::sort(known.begin(), known.end());
    const Knobs pick = model_->predict(n.shape, dtype, threads, layout).knobs;
    // A pick the search did not time ranked below what it timed: its median.
    const double seconds = n.seconds[std::size_t(pick.index())];
    sum += (std::isfinite(seconds) ? seconds : known[known.size() / 2]) / known.front() - 1;
    ++count;
  }
  return count >= kModelRecordShapes ? sum / count : 0;
}

ConfigRanking RankingContext::rank(const GemmShape& shape, DType dtype, int threads, Layout layout) const {
  std::optional<ModelPrediction> prediction;
  if (model_) prediction = model_->predict(shape, dtype, threads, layout);
  const std::size_t count = kRankingNeighbours;
  std::vector<RankingNeighbour> near = nearest_neighbours(shape, tuned_, count);
  // The model weighs less where its picks lost on the nearest shapes tuned
  // here: on a machine it describes badly, it would keep the right
  // configurations off short lists that its neighbours alone would have made.
  RankingOptions options = options_;
  if (model_ && options.model_trust > 0)
    options.model_weight *= std::exp(-model_regret(near, dtype, threads, layout) / options.model_trust);
  const std::vector<RankingNeighbour> far = nearest_neighbours(shape, foreign_, count);
  near.insert(near.end(), far.begin(), far.end());
  return rank_configs(shape, prediction ? &*prediction : nullptr, near, options);
}

std::vector<GemmShape> RankingContext::shapes(bool with_foreign) const {
  std::vector<GemmShape> out;
  for (const RankingNeighbour& n : tuned_) out.push_back(n.shape);
  if (with_foreign)
    for (const RankingNeighbour& n : foreign_) out.push_back(n.shape);
  return out;
}

std::array<double, kConfigCount> seconds_of(const TunedShape& shape) {
  std::array<double, kConfigCount> out;
  for (int i = 0; i < kConfigCount; ++i) out[std::size_t(i)] = double(shape.seconds[std::size_t(i)]);
  return out;
}

std::vector<GemmShape> spread_order(std::vector<GemmShape> shapes, std::span<const GemmShape> known) {
  const std::size_t n = shapes.size();
  if (n < 2) return shapes;
  // Distance of each remaining shape to the nearest one placed (or known).
  std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i)
    for (const GemmShape& k : known) nearest[i] = std::min(nearest[i], log2_distance(shapes[i], k));
  std::vector<bool> placed(n, false);
  std::vector<GemmShape> out;
  out.reserve(n);
  for (std::size_t step = 0; step < n; ++step) {
    std::size_t pick = n;
    if (step == 0 && known.empty()) {
      // The centre: the smallest sum of distances to all others.
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < n; ++j) sum += log2_distance(shapes[i], shapes[j]);
        if (sum < best) best = sum, pick = i;
      }
    } else {
      double farthest = -1;
      for (std::size_t i = 0; i < n; ++i)
        if (!placed[i] && nearest[i] > farthest) farthest = nearest[i], pick = i;
    }
    placed[pick] = true;
    out.push_back(shapes[pick]);
    for (std::size_t i = 0; i < n; ++i)
      if (!placed[i]) nearest[i] = std::min(nearest[i], log2_distance(shapes[i], shapes[pick]));
  }
  return out;
}

}  // namespace sfc
