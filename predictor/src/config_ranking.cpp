#include "sfc/config_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "sfc/error.hpp"

namespace sfc {
namespace {

// Log time relative to the source's best for every configuration; false when
// the source measured nothing usable. Unmeasured configurations are NaN.
bool relative_log_times(const std::array<double, kConfigCount>& seconds,
                        std::array<double, kConfigCount>& out) {
  double best = INFINITY;
  for (double s : seconds)
    if (std::isfinite(s) && s > 0) best = std::min(best, s);
  if (!std::isfinite(best)) return false;
  for (int i = 0; i < kConfigCount; ++i) {
    const double s = seconds[std::size_t(i)];
    out[std::size_t(i)] = std::isfinite(s) && s > 0 ? std::log(s / best) : NAN;
  }
  return true;
}

int best_of(const std::array<double, kConfigCount>& score) {
  return int(std::min_element(score.begin(), score.end()) - score.begin());
}

}  // namespace

double log2_distance(const GemmShape& a, const GemmShape& b) {
  const double dm = std::log2(double(a.m) / double(b.m)), dn = std::log2(double(a.n) / double(b.n)),
               dk = std::log2(double(a.k) / double(b.k));
  return std::sqrt(dm * dm + dn * dn + dk * dk);
}

std::vector<RankingNeighbour> nearest_neighbours(const GemmShape& shape,
                                                 std::span<const RankingNeighbour> tuned, std::size_t count) {
  std::vector<RankingNeighbour> out(tuned.begin(), tuned.end());
  for (RankingNeighbour& n : out) n.distance = log2_distance(shape, n.shape);
  std::stable_sort(out.begin(), out.end(), [](const RankingNeighbour& a, const RankingNeighbour& b) {
    return a.distance < b.distance;
  });
  if (out.size() > count) out.resize(count);
  return out;
}

ConfigRanking rank_configs(const GemmShape& shape, const ModelPrediction* model,
                           std::span<const RankingNeighbour> neighbours, const RankingOptions& options) {
  check_prediction_request(shape, 1);
  if (options.min_shortlist < 1 || options.max_shortlist < options.min_shortlist)
    throw Error("the shortlist needs 1 <= min_shortlist <= max_shortlist, got " +
                std::to_string(options.min_shortlist) + " and " + std::to_string(options.max_shortlist));
  if (options.leaders < 0) throw Error("leaders must be >= 0, got " + std::to_string(options.leaders));

  struct Source {
    std::array<double, kConfigCount> log_times;
    double weight;
  };
  std::vector<Source> sources;
  Source s;
  if (model && options.model_weight > 0 && relative_log_times(model->config_seconds, s.log_times)) {
    s.weight = options.model_weight;
    sources.push_back(s);
  }
  double nearest = INFINITY;
  for (const RankingNeighbour& n : neighbours) {
    if (!relative_log_times(n.seconds, s.log_times)) continue;
    const double distance = log2_distance(shape, n.shape);
    if (!n.foreign) nearest = std::min(nearest, distance);
    s.weight = (n.foreign ? options.foreign_weight : 1.0) / (distance + 0.125);
    sources.push_back(s);
  }

  ConfigRanking r;
  r.leaders = options.leaders;
  r.sources = int(sources.size());
  // A configuration a source did not measure takes that source's median
  // measured time: neither ranked out for good (a short list's neighbour
  // would keep the next shapes from ever trying it) nor in front.
  double total = 0;
  std::array<double, kConfigCount> weights{};
  for (Source& src : sources) {
    total += src.weight;
    std::vector<double> known;
    for (double v : src.log_times)
      if (!std::isnan(v)) known.push_back(v);
    std::sort(known.begin(), known.end());
    const double missing = known[known.size() / 2];
    for (double& v : src.log_times)
      if (std::isnan(v)) v = missing;
    for (int i = 0; i < kConfigCount; ++i) {
      const double v = src.log_times[std::size_t(i)];
      if (std::isnan(v)) continue;
      r.score[std::size_t(i)] += src.weight * v;
      weights[std::size_t(i)] += src.weight;
    }
  }
  double worst = 0;
  for (int i = 0; i < kConfigCount; ++i)
    if (weights[std::size_t(i)] > 0)
      worst = std::max(worst, r.score[std::size_t(i)] /= weights[std::size_t(i)]);
  for (int i = 0; i < kConfigCount; ++i)
    if (weights[std::size_t(i)] == 0) r.score[std::size_t(i)] = worst;  // no source measured it
  for (Source& src : sources)
    for (double& v : src.log_times)
      if (std::isnan(v)) v = INFINITY;
  std::array<int, kConfigCount> index;
  std::iota(index.begin(), index.end(), 0);
  // Ties keep the smaller configuration first (fewer layers, then fewer rounds).
  std::stable_sort(index.begin(), index.end(),
                   [&](int a, int b) { return r.score[std::size_t(a)] < r.score[std::size_t(b)]; });
  for (int i = 0; i < kConfigCount; ++i) r.order[std::size_t(i)] = Knobs::at(index[std::size_t(i)]);

  if (!sources.empty()) {
    // Agreement: the weighted share of sources whose own best is among the
    // ranking's first two (a lone source agrees with itself: half).
    double agreeing = 0;
    for (const Source& src : sources) {
      const int own = best_of(src.log_times);
      if (own == index[0] || own == index[1]) agreeing += src.weight;
    }
    const double agreement = sources.size() == 1 ? 0.5 : agreeing / total;
    const double proximity = std::isfinite(nearest) ? std::exp(-nearest / options.distance_scale) : 0.0;
    const double margin = std::min(
        1.0, (r.score[std::size_t(index[1])] - r.score[std::size_t(index[0])]) / options.margin_scale);
    r.confidence = std::clamp((agreement + proximity + margin) / 3, 0.0, 1.0);
  }
  r.length = int(
      std::lround(options.max_shortlist - (options.max_shortlist - options.min_shortlist) * r.confidence));
  return r;
}

std::vector<Knobs> ConfigRanking::shortlist(std::uint64_t allowed,
                                            const std::function<Knobs(Knobs)>& effective) const {
  std::vector<Knobs> out;
  std::set<Knobs> plans;
  const auto plan_of = [&](Knobs k) { return effective ? effective(k) : k; };
  const auto take = [&](Knobs k) {
    if (!((allowed >> k.index()) & 1) || std::ranges::find(out, k) != out.end()) return false;
    if (!plans.insert(plan_of(k)).second) return false;  // runs as a plan already listed
    out.push_back(k);
    return true;
  };
  for (Knobs k : order)
    if (int(plans.size()) < length) take(k);
  const std::vector<Knobs> ranked(out.begin(), out.end());
  for (int l = 0; l < std::min<int>(leaders, int(ranked.size())); ++l) {
    const Knobs c = ranked[std::size_t(l)];
    for (Knobs n : {Knobs{c.k_layers - 1, c.k_block_factor}, Knobs{c.k_layers + 1, c.k_block_factor},
                    Knobs{c.k_layers, c.k_block_factor - 1}, Knobs{c.k_layers, c.k_block_factor + 1}})
      if (n.valid()) take(n);
  }
  return out;
}

}  // namespace sfc
