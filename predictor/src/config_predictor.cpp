// ConfigPredictor: the k-d trees, the neighbour rules and the tier policy.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <nanoflann.hpp>
#include <numeric>
#include <string>

#include "sfc/error.hpp"
#include "sfc/predictor.hpp"

namespace sfc {
namespace {

using Point = std::array<double, 3>;

Point log2_point(const GemmShape& s) {
  return {std::log2(double(s.m)), std::log2(double(s.n)), std::log2(double(s.k))};
}

// A neighbour at distance 0 would otherwise outweigh the rest infinitely;
// 1/8 (a factor of 2^(1/8) ~ 9% in one size) keeps near ones dominant.
constexpr double vote_distance_floor = 0.125;
constexpr int max_vote_neighbours = 32;

// The nearest tier's reach when there are too few tuned shapes to choose it
// from: a factor of 2 in one size.
constexpr double default_max_distance = 1.0;
// The reaches the leave-one-out choice considers (log2 units).
constexpr std::array<double, 8> candidate_distances = {
    0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, std::numeric_limits<double>::infinity()};
// The paper's fraction of L2 for one round's A and B panels (section III-C),
// and the fractions fitted to tuned shapes are chosen from (it first).
constexpr double paper_l2_fraction = kPanelL2Fraction;
constexpr std::array<double, 9> candidate_l2_fractions = {
    paper_l2_fraction, 0.25, 1, 2, 4, 8, 16, 64, std::numeric_limits<double>::infinity()};
// Fewer tuned shapes than this and the leave-one-out choices are not made.
constexpr std::size_t min_shapes_to_choose = 3;

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

bool has_winner(const TunedShape& s) { return s.winner().valid(); }

}  // namespace

// The tuned shapes of one (dtype, threads, layout), in log2 space, with a k-d tree.
struct ConfigPredictor::ShapeGroup {
  DType dtype;
  int threads;
  Layout layout;
  PlatformMatch match;  // of the table the shapes came from
  std::vector<GemmShape> shapes;
  std::vector<Point> points;   // log2 of each shape
  std::vector<Knobs> winners;  // of each shape
  // Per shape and configuration: time of its winner / time of the
  // configuration, in (0, 1]; 0 where the configuration was not measured.
  std::vector<std::array<float, kConfigCount>> throughput;

  // nanoflann's dataset interface over `points`.
  std::size_t kdtree_get_point_count() const { return points.size(); }
  double kdtree_get_pt(std::size_t i, std::size_t dim) const { return points[i][dim]; }
  template <class Box>
  bool kdtree_get_bbox(Box&) const {
    return false;
  }

  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, ShapeGroup>,
                                                   ShapeGroup, 3, std::uint32_t>;
  std::unique_ptr<Tree> tree;  // built once every shape is in

  void add(const TunedShape& s) {
    shapes.push_back(s.shape);
    points.push_back(log2_point(s.shape));
    const double best = best_seconds(s);
    std::array<float, kConfigCount> row{};
    for (int i = 0; i < kConfigCount; ++i)  // NaN (not measured) compares false: 0
      row[i] = s.seconds[i] > 0 ? float(std::min(1.0, best / s.seconds[i])) : 0.0f;
    throughput.push_back(row);
    // A table names each shape's winner; without one, the fastest time stands in.
    const int fastest = int(std::max_element(row.begin(), row.end()) - row.begin());
    winners.push_back(has_winner(s) ? s.winner() : Knobs::at(fastest));
  }

  // Up to `k` nearest shapes: indices and Euclidean distances, nearest first.
  std::size_t nearest(const GemmShape& shape, std::size_t k, std::uint32_t* index, double* distance) const {
    const Point q = log2_point(shape);
    const std::size_t found = tree->knnSearch(q.data(), k, index, distance);
    for (std::size_t i = 0; i < found; ++i) distance[i] = std::sqrt(distance[i]);
    return found;
  }

  Knobs winner(std::uint32_t i) const { return winners[i]; }

  // The vote of the `neighbours` nearest shapes, leaving out shape `skip`
  // (the leave-one-out test below; npos: none).
  Knobs vote(const GemmShape& shape, int neighbours, std::size_t skip = npos) const {
    std::array<std::uint32_t, max_vote_neighbours + 1> index;
    std::array<double, max_vote_neighbours + 1> distance;
    const std::size_t wanted = std::size_t(neighbours) + (skip == npos ? 0 : 1);
    const std::size_t found = nearest(shape, wanted, index.data(), distance.data());
    std::array<double, kConfigCount> score{};
    for (std::size_t i = 0, used = 0; i < found && used < std::size_t(neighbours); ++i) {
      if (index[i] == skip) continue;
      ++used;
      const double weight = 1.0 / (distance[i] + vote_distance_floor);
      const auto& row = throughput[index[i]];
      for (int c = 0; c < kConfigCount; ++c) score[c] += weight * row[c];
    }
    const int best = int(std::max_element(score.begin(), score.end()) - score.begin());
    return Knobs::at(best);
  }

  // Regret of `knobs` on tuned shape i: its time over the winner's, less 1;
  // 1 (twice as slow) where the configuration was not measured.
  double regret(std::size_t i, Knobs knobs) const {
    const float t = throughput[i][knobs.index()];
    return t > 0 ? 1.0 / t - 1.0 : 1.0;
  }

  // Each tuned shape predicted from all the others: the distance to its
  // nearest other shape and the regret of each neighbour rule.
  struct LeaveOneOut {
    std::vector<double> distance, nearest, vote;
  };
  LeaveOneOut leave_one_out(int neighbours) const {
    LeaveOneOut loo;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      std::array<std::uint32_t, 2> index;
      std::array<double, 2> distance;
      this->nearest(shapes[i], 2, index.data(), distance.data());
      const std::size_t other = index[0] == i ? 1 : 0;
      loo.distance.push_back(distance[other]);
      loo.nearest.push_back(regret(i, winners[index[other]]));
      loo.vote.push_back(regret(i, vote(shapes[i], neighbours, i)));
    }
    return loo;
  }

  static constexpr std::size_t npos = std::size_t(-1);
  // The policy's choices for this group.
  bool policy_votes = false;
  double max_distance = default_max_distance;
};

double best_seconds(const TunedShape& s) {
  if (has_winner(s)) {
    const float winner = s.seconds[s.winner().index()];
    if (winner > 0) return winner;
  }
  double best = std::numeric_limits<double>::infinity();
  for (float t : s.seconds)
    if (t > 0) best = std::min(best, double(t));  // NaN compares false: skipped
  return best;
}

std::string_view to_string(Tier tier) {
  switch (tier) {
    case Tier::exact: return "exact";
    case Tier::nearest: return "nearest";
    case Tier::model: return "model";
    case Tier::fallback: return "default";
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

ConfigPredictor::ConfigPredictor(const std::vector<TuningTable>& tables, PredictorOptions options,
                                 const std::optional<Platform>& here)
    : options_(options),
      l2_rule_{0, AnalyticalModel({}, 0, options.l2_fraction.value_or(paper_l2_fraction)),
               PlatformMatch::exact} {
  if (options_.vote_neighbours < 1 || options_.vote_neighbours > max_vote_neighbours)
    throw Error("the vote needs 1.." + std::to_string(max_vote_neighbours) + " neighbours, got " +
                std::to_string(options_.vote_neighbours));
  if (options_.max_distance && !(*options_.max_distance >= 0))
    throw Error("the nearest-tier distance must be >= 0");
  if (options_.l2_fraction && !(*options_.l2_fraction > 0)) throw Error("the L2 fraction must be > 0");
  const double fraction = options_.l2_fraction.value_or(paper_l2_fraction);
  // The default tier needs nothing from a table but an L2 size: this machine's
  // when known (then its answers are exact), else the first table's that has one.
  const bool l2_here = here && here->l2_bytes > 0;
  if (l2_here) l2_rule_.model = AnalyticalModel({}, here->l2_bytes, fraction);
  bool have_l2 = l2_here;
  for (const TuningTable& table : tables) {
    const Platform& p = table.platform;
    const PlatformMatch match = here ? compare_platforms(p, *here).match : PlatformMatch::exact;
    if (!have_l2 && p.l2_bytes > 0) {
      l2_rule_ = {p.threads, AnalyticalModel({}, p.l2_bytes, fraction), match};
      have_l2 = true;
    }
    // One model per thread count: the table's gamma and beta with the L2 of
    // the machine the answers are for (the first calibrated table of that
    // thread count; load_tuning_tables() gives one table per thread count).
    const std::size_t l2 = l2_here ? here->l2_bytes : p.l2_bytes;
    const ThreadModel m{p.threads, AnalyticalModel(table.calibration, l2, fraction), match};
    auto known = std::find_if(models_.begin(), models_.end(),
                              [&](const ThreadModel& entry) { return entry.threads == p.threads; });
    if (known == models_.end())
      models_.push_back(m);
    else if (!known->model.calibrated() && m.model.calibrated())
      *known = m;
    for (const TunedShape& s : table.shapes) {
      auto same = [&](const auto& g) {
        return g->dtype == s.dtype && g->threads == s.threads && g->layout == s.layout;
      };
      auto it = std::find_if(groups_.begin(), groups_.end(), same);
      if (it == groups_.end()) {
        auto g = std::make_unique<ShapeGroup>();
        g->dtype = s.dtype;
        g->threads = s.threads;
        g->layout = s.layout;
        g->match = match;
        groups_.push_back(std::move(g));
        it = groups_.end() - 1;
      }
      (*it)->add(s);
    }
  }
  for (auto& g : groups_)
    g->tree = std::make_unique<ShapeGroup::Tree>(3, *g, nanoflann::KDTreeSingleIndexAdaptorParams(10));
  if (!options_.l2_fraction)
    for (ThreadModel& m : models_) fit_l2_fraction(m.threads, m.model);
  for (auto& g : groups_) choose_policy(*g);
}

// The L2 rule's fraction for one thread count, fitted to its tuned shapes:
// the candidate whose answers (the model's, or the default's without
// calibration) have the lowest total regret on them. The paper's 0.5 is the
// first candidate, so it stays on ties. A large fraction says that missing L2
// costs less than re-reading C once per extra round (a large, fast L3).
void ConfigPredictor::fit_l2_fraction(int threads, AnalyticalModel& model) const {
  std::vector<const ShapeGroup*> tuned;
  std::size_t count = 0;
  for (const auto& g : groups_)
    if (g->threads == threads) {
      tuned.push_back(g.get());
      count += g->shapes.size();
    }
  if (count < min_shapes_to_choose) return;
  double best = std::numeric_limits<double>::infinity();
  const AnalyticalModel original = model;
  for (double fraction : candidate_l2_fractions) {
    const AnalyticalModel candidate = original.with_l2_fraction(fraction);
    double total = 0;
    for (const ShapeGroup* g : tuned)
      for (std::size_t i = 0; i < g->shapes.size(); ++i)
        total += g->regret(i, below_neighbours(candidate, g->shapes[i], g->dtype, threads).knobs);
    if (total < best) {
      best = total;
      model = candidate;
    }
  }
}

// The policy's choices for a group, from its own shapes each predicted from
// all the others: the neighbour rule with the lower mean regret, and the reach
// of the nearest tier -- the candidate distance below which taking the
// neighbours' answer costs less regret than the tier below (model or default)
// would on the same shapes. Ties keep nearest, and the longer reach.
void ConfigPredictor::choose_policy(ShapeGroup& g) const {
  const bool automatic_rule = options_.policy_rule == NeighbourRule::automatic;
  g.policy_votes = options_.policy_rule == NeighbourRule::vote;
  g.max_distance = options_.max_distance.value_or(default_max_distance);
  if (g.shapes.size() < min_shapes_to_choose || (!automatic_rule && options_.max_distance)) return;

  const ShapeGroup::LeaveOneOut loo = g.leave_one_out(options_.vote_neighbours);
  if (automatic_rule) g.policy_votes = sum(loo.vote) < sum(loo.nearest);
  if (options_.max_distance) return;
  const std::vector<double>& neighbour = g.policy_votes ? loo.vote : loo.nearest;
  std::vector<double> below;  // regret of the tier below the nearest one
  for (std::size_t i = 0; i < g.shapes.size(); ++i)
    below.push_back(g.regret(i, fallback(g.shapes[i], g.dtype, g.threads).knobs));
  // Leave-one-out only tests neighbours as far apart as the tuned shapes
  // are: a reach beyond the farthest such distance (rounded up to the next
  // candidate) would trust neighbours where nothing was measured. Past it the
  // tier below answers (the model extrapolates by construction; a neighbour
  // 2.8-4 octaves away cost 10% on large shapes tuned on the small grid).
  const double tested = *std::max_element(loo.distance.begin(), loo.distance.end());
  const double cap = *std::find_if(candidate_distances.begin(), candidate_distances.end(),
                                   [tested](double d) { return d >= tested; });
  double best = std::numeric_limits<double>::infinity();
  for (double reach : candidate_distances) {
    if (reach > cap) break;
    double total = 0;
    for (std::size_t i = 0; i < neighbour.size(); ++i)
      total += loo.distance[i] <= reach ? neighbour[i] : below[i];
    if (total <= best) {
      best = total;
      g.max_distance = reach;
    }
  }
}

ConfigPredictor::~ConfigPredictor() = default;
ConfigPredictor::ConfigPredictor(ConfigPredictor&&) noexcept = default;
ConfigPredictor& ConfigPredictor::operator=(ConfigPredictor&&) noexcept = default;

NeighbourRule ConfigPredictor::policy_rule(DType dtype, int threads, Layout layout) const {
  const ShapeGroup* g = group(dtype, threads, layout).shapes;
  return g && g->policy_votes ? NeighbourRule::vote : NeighbourRule::nearest;
}

double ConfigPredictor::policy_max_distance(DType dtype, int threads, Layout layout) const {
  const ShapeGroup* g = group(dtype, threads, layout).shapes;
  return g ? g->max_distance : options_.max_distance.value_or(default_max_distance);
}

// The fraction of the model fallback() answers with for `threads`.
double ConfigPredictor::l2_fraction(int threads) const {
  if (const ThreadModel* m = model(threads)) return m->model.l2_fraction();
  for (const ThreadModel& m : models_)
    if (m.threads == threads) return m.model.l2_fraction();
  return l2_rule_.model.l2_fraction();
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
  if (const ShapeGroup* own = find(layout)) return {own, false};
  if (layout == Layout::blocked) return {};
  const Layout sibling = layout == Layout::row_major ? Layout::col_major : Layout::row_major;
  if (const ShapeGroup* plain = find(sibling)) return {plain, true};
  return {find(Layout::blocked), false};
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
    const GemmShape& n = g->shapes[i];
    a.nearest = found.transposed ? GemmShape{n.n, n.m, n.k} : n;  // in the query's terms
    a.platform = g->match;
    if (n.m == q.m && n.n == q.n && n.k == q.k) {
      a.knobs = g->winner(i);
      a.tier = Tier::exact;
      return a;
    }
    if (d <= g->max_distance) {
      a.knobs = g->policy_votes ? g->vote(q, options_.vote_neighbours) : g->winner(i);
      a.tier = Tier::nearest;
      return a;
    }
  }
  const Answer below = fallback(shape, dtype, threads);
  a.knobs = below.knobs;
  a.tier = below.tier;
  a.platform = below.platform;
  return a;
}

// The model of this thread count or, when none of its tables is calibrated,
// another's; else the default with this thread count's own L2 rule.
Answer ConfigPredictor::fallback(const GemmShape& shape, DType dtype, int threads) const {
  const ThreadModel* m = model(threads);
  if (!m) {
    m = &l2_rule_;
    for (const ThreadModel& own : models_)
      if (own.threads == threads) m = &own;
  }
  Answer a = below_neighbours(m->model, shape, dtype, threads);
  a.platform = m->match;
  return a;
}

Answer ConfigPredictor::below_neighbours(const AnalyticalModel& m, const GemmShape& shape, DType dtype,
                                         int threads) {
  Answer a;
  if (m.calibrated()) {
    a.knobs = m.predict(shape, dtype, threads).knobs;
    a.tier = Tier::model;
  } else {
    a.knobs = {1, m.block_factor(shape, dtype, threads, 1)};
    a.tier = Tier::fallback;
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
    return m->model.predict(shape, dtype, threads).knobs;
  }
  const GroupFor found = group(dtype, threads, layout);
  const ShapeGroup* g = found.shapes;
  if (!g)
    throw Error("no tuned " + std::string(to_string(dtype)) + " shapes for " + std::to_string(threads) +
                " threads");
  const GemmShape q = found.transposed ? GemmShape{shape.n, shape.m, shape.k} : shape;
  if (predictor == Predictor::vote) return g->vote(q, options_.vote_neighbours);
  std::uint32_t i;
  double d;
  g->nearest(q, 1, &i, &d);
  return g->winner(i);
}

}  // namespace sfc
