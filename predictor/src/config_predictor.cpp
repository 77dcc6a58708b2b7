// ConfigPredictor, answering: the tier policy that query() applies, and each
// predictor alone (predict()). What query() relies on was fitted once, when
// the tables were loaded (predictor_fit.cpp); the groups are in shape_group.hpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "sfc/error.hpp"
#include "sfc/predictor.hpp"
#include "shape_group.hpp"

namespace sfc {

double best_seconds(const TunedShape& s) {
  if (has_winner(s)) {
    const float winner = s.seconds[s.winner().index()];
    if (std::isgreater(winner, 0.0f)) return winner;
  }
  double best = std::numeric_limits<double>::infinity();
  for (float t : s.seconds)
    if (std::isgreater(t, 0.0f)) best = std::min(best, double(t));  // NaN (not measured): skipped, quietly
  return best;
}

std::string_view to_string(Tier tier) {
  switch (tier) {
    case Tier::exact: return "exact";
    case Tier::nearest: return "nearest";
    case Tier::model: return "model";
    case Tier::default_config: return "default";
  }
  return "?";
}

std::string_view to_string(NeighbourRule rule) {
  switch (rule) {
    case NeighbourRule::nearest: return "nearest";
    case NeighbourRule::vote: return "vote";
    case NeighbourRule::automatic: return "auto";
  }
  return "?";
}

std::string_view to_string(Predictor predictor) {
  switch (predictor) {
    case Predictor::nearest: return "nearest";
    case Predictor::vote: return "vote";
    case Predictor::model: return "model";
    case Predictor::policy: return "policy";
  }
  return "?";
}

ConfigPredictor::~ConfigPredictor() = default;
ConfigPredictor::ConfigPredictor(ConfigPredictor&&) noexcept = default;
ConfigPredictor& ConfigPredictor::operator=(ConfigPredictor&&) noexcept = default;

ShapeRegime regime_of(const GemmShape& shape) {
  return std::min({shape.m, shape.n, shape.k}) < kThinBelow ? ShapeRegime::thin : ShapeRegime::bulk;
}

std::string_view to_string(ShapeRegime regime) { return regime == ShapeRegime::thin ? "thin" : "bulk"; }

NeighbourRule ConfigPredictor::policy_rule(DType dtype, int threads, Layout layout,
                                           ShapeRegime regime) const {
  const ShapeGroup* g = group(dtype, threads, layout).shapes;
  return g && g->policy_of(regime).votes ? NeighbourRule::vote : NeighbourRule::nearest;
}

double ConfigPredictor::policy_max_distance(DType dtype, int threads, Layout layout,
                                            ShapeRegime regime) const {
  const ShapeGroup* g = group(dtype, threads, layout).shapes;
  return g ? g->policy_of(regime).max_distance : options_.max_distance.value_or(default_max_distance);
}

// The fraction of the model fallback() answers with for `threads`.
double ConfigPredictor::l2_fraction(int threads) const {
  if (const ThreadModel* m = model(threads)) return m->model.l2_fraction();
  for (const ThreadModel& m : models_)
    if (m.threads == threads) return m.model.l2_fraction();
  return l2_rule_.model.l2_fraction();
}

double ConfigPredictor::reread_rate(int threads) const {
  if (const ThreadModel* m = model(threads)) return m->model.reread_rate();
  return l2_rule_.model.reread_rate();
}

double ConfigPredictor::round_slab_fraction(int threads) const {
  if (const ThreadModel* m = model(threads)) return m->model.round_slab_fraction();
  return l2_rule_.model.round_slab_fraction();
}

double ConfigPredictor::shared_slab_room(int threads) const {
  if (const ThreadModel* m = model(threads)) return m->model.shared_slab_room();
  return l2_rule_.model.shared_slab_room();
}

// A layout without tuned shapes of its own borrows another's. Row-major
// M x N x K runs the column-major loop on N x M x K (sfc/gemm.hpp), so each of
// the two plain layouts borrows the other's shapes transposed; failing that,
// the blocked layout's (winners that differ on some shapes, but far less than
// a blind guess).
ConfigPredictor::GroupFor ConfigPredictor::group(DType dtype, int threads, Layout layout) const {
  const auto find = [&](Layout l) -> const ShapeGroup* {
    for (const auto& g : groups_)
      if (g->dtype == dtype && g->threads == threads && g->layout == l) return g.get();
    return nullptr;
  };
  if (const ShapeGroup* own = find(layout)) return {own, false, std::nullopt};
  if (layout == Layout::blocked) return {};
  const Layout sibling = layout == Layout::row_major ? Layout::col_major : Layout::row_major;
  if (const ShapeGroup* plain = find(sibling)) return {plain, true, sibling};
  const ShapeGroup* blocked = find(Layout::blocked);
  return {blocked, false, blocked ? std::optional(Layout::blocked) : std::nullopt};
}

std::vector<ConfigPredictor::Group> ConfigPredictor::groups() const {
  std::vector<Group> held;
  for (const auto& g : groups_) held.push_back({g->dtype, g->threads, g->layout, g->shapes.size(), g->match});
  return held;
}

const ConfigPredictor::ThreadModel* ConfigPredictor::model(int threads) const {
  const ThreadModel* best = nullptr;
  // Ordered by match, then by how far the thread count is (a factor of 2 either way counts alike).
  const auto rank = [threads](const ThreadModel& m) {
    return std::pair(static_cast<int>(m.match), std::abs(std::log2(double(m.threads) / threads)));
  };
  for (const ThreadModel& m : models_) {
    if (!m.model.calibrated()) continue;
    if (m.threads == threads) return &m;
    if (!best || rank(m) < rank(*best)) best = &m;
  }
  return best;
}

Answer ConfigPredictor::query(const GemmShape& shape, DType dtype, int threads, Layout layout) const {
  check_prediction_request(shape, threads);
  Answer a;
  const GroupFor found = group(dtype, threads, layout);
  if (const ShapeGroup* g = found.shapes) {
    const GemmShape q = found.transposed ? GemmShape{shape.n, shape.m, shape.k} : shape;
    std::uint32_t i;
    double d;
    g->nearest(q, 1, &i, &d);
    a.distance = d;
    a.borrowed_from = found.borrowed_from;
    const GemmShape& n = g->shapes[i];
    a.nearest = found.transposed ? GemmShape{n.n, n.m, n.k} : n;  // in the query's terms
    a.platform = g->match;
    if (n.m == q.m && n.n == q.n && n.k == q.k) {
      a.knobs = g->winner(i);
      a.tier = Tier::exact;
      a.measured_configs = int(std::count_if(g->throughput[i].begin(), g->throughput[i].end(),
                                             [](float score) { return score > 0; }));
      return a;
    }
    const ShapeGroup::Policy& policy = g->policy_for(q);
    if (d <= policy.max_distance) {
      a.knobs = policy.votes ? g->vote(q, options_.vote_neighbours, options_.tie_tolerance) : g->winner(i);
      a.tier = Tier::nearest;
      return a;
    }
  }
  const Answer below = fallback(shape, dtype, threads, layout);
  a.borrowed_from.reset();  // the model or default tier answers for this layout itself
  a.knobs = below.knobs;
  a.tier = below.tier;
  a.platform = below.platform;
  return a;
}

// The model of this thread count or, when none of its tables is calibrated,
// another's; else the default with this thread count's own L2 rule.
Answer ConfigPredictor::fallback(const GemmShape& shape, DType dtype, int threads, Layout layout) const {
  const ThreadModel* m = model(threads);
  if (!m) {
    m = &l2_rule_;
    for (const ThreadModel& own : models_)
      if (own.threads == threads) m = &own;
  }
  Answer a = below_neighbours(m->for_shape(shape), shape, dtype, threads, layout);
  a.platform = m->match;
  return a;
}

Answer ConfigPredictor::below_neighbours(const AnalyticalModel& m, const GemmShape& shape, DType dtype,
                                         int threads, Layout layout) {
  Answer a;
  if (m.calibrated()) {
    a.knobs = m.predict(shape, dtype, threads, layout).knobs;
    a.tier = Tier::model;
  } else {
    a.knobs = {1, m.block_factor(shape, dtype, threads, 1)};
    a.tier = Tier::default_config;
  }
  return a;
}

Knobs ConfigPredictor::predict(Predictor predictor, const GemmShape& shape, DType dtype, int threads,
                               Layout layout) const {
  check_prediction_request(shape, threads);
  if (predictor == Predictor::policy) return query(shape, dtype, threads, layout).knobs;
  if (predictor == Predictor::model) {
    const ThreadModel* m = model(threads);
    if (!m) throw Error("no calibration: run `sfc-tune calibrate` on this platform");
    return m->for_shape(shape).predict(shape, dtype, threads, layout).knobs;
  }
  const GroupFor found = group(dtype, threads, layout);
  const ShapeGroup* g = found.shapes;
  if (!g)
    throw Error("no tuned " + std::string(to_string(dtype)) + " shapes for " + std::to_string(threads) +
                " threads");
  const GemmShape q = found.transposed ? GemmShape{shape.n, shape.m, shape.k} : shape;
  if (predictor == Predictor::vote) return g->vote(q, options_.vote_neighbours, options_.tie_tolerance);
  std::uint32_t i;
  double d;
  g->nearest(q, 1, &i, &d);
  return g->winner(i);
}

}  // namespace sfc
