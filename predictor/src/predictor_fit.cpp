// ConfigPredictor, fitting: what is decided once, when the tables are
// loaded -- the groups and their k-d trees, one model per thread count, the
// L2 fraction of each model and the policy of each group (its neighbour rule
// and the nearest tier's reach), all chosen from the tuned shapes themselves.
#include <algorithm>
#include <limits>
#include <string>

#include "sfc/error.hpp"
#include "sfc/predictor.hpp"
#include "shape_group.hpp"

namespace sfc {

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
  if (!(options_.tie_tolerance >= 0 && options_.tie_tolerance < 1))
    throw Error("the tie tolerance must be in [0, 1), got " + std::to_string(options_.tie_tolerance));
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
      (*it)->add(s, options_.tie_tolerance);
    }
  }
  for (auto& g : groups_)
    g->tree = std::make_unique<ShapeGroup::Tree>(3, *g, nanoflann::KDTreeSingleIndexAdaptorParams(10));
  if (!options_.l2_fraction)
    for (ThreadModel& m : models_) fit_l2_fraction(m);
  for (auto& g : groups_) choose_policy(*g);
}

// The model's two fitted numbers for one thread count, from its tuned shapes:
// the L2 fraction of one round's panels and the rate at which what L2 fails
// to hold is fetched again -- the pair whose answers (the model's, or the
// default's without calibration) have the lowest total regret on them -- and
// then whether the cap on a round's depth stays, and how much room L2 needs
// for a shared slab. The paper's 0.5, kRereadRate, the cap and
// kSharedSlabRoom come first, so they stay on ties. A large
// fraction says that missing L2 costs little (a large, fast L3); a low rate
// that re-reading A and B from beyond L2 stalls the kernel. The pair is only
// as good as the shapes it was fitted on: it answers within their box, and
// the paper's numbers beyond it (ThreadModel::for_shape).
void ConfigPredictor::fit_l2_fraction(ThreadModel& m) const {
  std::vector<const ShapeGroup*> tuned;
  std::size_t count = 0;
  std::int64_t mn = 0, k = 0;
  for (const auto& g : groups_)
    if (g->threads == m.threads) {
      tuned.push_back(g.get());
      count += g->shapes.size();
      for (const GemmShape& s : g->shapes) mn = std::max({mn, s.m, s.n}), k = std::max(k, s.k);
    }
  if (count < min_shapes_to_choose) return;
  const auto total_regret = [&](const AnalyticalModel& candidate) {
    double total = 0;
    for (const ShapeGroup* g : tuned)
      for (std::size_t i = 0; i < g->shapes.size(); ++i)
        total +=
            g->regret(i, below_neighbours(candidate, g->shapes[i], g->dtype, m.threads, g->layout).knobs);
    return total;
  };
  double best = std::numeric_limits<double>::infinity();
  const AnalyticalModel original = m.unfitted;
  // Without a calibration only the default's L2 rule answers: the rate plays no part.
  const std::size_t rates = original.calibrated() ? candidate_reread_rates.size() : 1;
  for (std::size_t r = 0; r < rates; ++r)
    for (double fraction : candidate_l2_fractions) {
      const AnalyticalModel candidate =
          original.with_fit(fraction, candidate_reread_rates[r], original.round_slab_fraction());
      if (const double total = total_regret(candidate); total < best) {
        best = total;
        m.model = candidate;
      }
    }
  // Then whether the cap on a round's depth (kRoundSlabL2Fraction) pays on
  // these shapes: it was chosen on shapes beyond the tuned sizes, and inside
  // them some machines run deep rounds well (an older Zen 5's fp32 table, whose
  // in-box hold-outs it cost 0.1-0.6 points of the model's regret). One more
  // model run per shape rather than a third dimension of candidates: choosing
  // it jointly with the pair measured the same on every shipped table. (The
  // default's L2 rule, all that answers without a calibration, has no cap.)
  if (original.calibrated()) {
    const AnalyticalModel uncapped = original.with_fit(m.model.l2_fraction(), m.model.reread_rate(),
                                                       std::numeric_limits<double>::infinity());
    if (const double total = total_regret(uncapped); total < best) {
      best = total;
      m.model = uncapped;
    }
    // And the room L2 needs for a slab shared by consecutive tiles to be read
    // once (kSharedSlabRoom): one tile's slabs where the cache keeps them
    // that well, as on the Zen 5's 1 MiB L2; likewise one more run per shape.
    const AnalyticalModel tight = m.model.with_fit(m.model.l2_fraction(), m.model.reread_rate(),
                                                   m.model.round_slab_fraction(), kTightSharedSlabRoom);
    if (total_regret(tight) < best) m.model = tight;
  }
  m.fitted_mn = mn;
  m.fitted_k = k;
}

// The policy's choices for a group's shapes `members` (indices), from those
// shapes each predicted from all the others: the neighbour rule with the
// lower mean regret, and the reach of the nearest tier -- the candidate
// distance below which taking the neighbours' answer costs less regret than
// the tier below (model or default) would on the same shapes. Ties keep
// nearest, and the longer reach. `below`: each shape's regret in the tier below.
ConfigPredictor::ShapeGroup::Policy ConfigPredictor::ShapeGroup::choose_policy(
    const PredictorOptions& options, const LeaveOneOut& loo, const std::vector<double>& below,
    const std::vector<std::size_t>& members) {
  Policy p{options.policy_rule == NeighbourRule::vote, options.max_distance.value_or(default_max_distance)};
  double vote = 0, nearest = 0;
  for (std::size_t i : members) vote += loo.vote[i], nearest += loo.nearest[i];
  if (options.policy_rule == NeighbourRule::automatic) p.votes = vote < nearest;
  if (options.max_distance) return p;
  const std::vector<double>& neighbour = p.votes ? loo.vote : loo.nearest;
  // Leave-one-out only tests neighbours as far apart as the tuned shapes
  // are: a reach beyond the farthest such distance (rounded up to the next
  // candidate) would trust neighbours where nothing was measured. Past it the
  // tier below answers (the model extrapolates by construction; a far
  // neighbour cost large shapes tuned on the small grid:
  // docs/experiments/2026-12-07-figures-from-code-comments.md#nearest-tiers-reach).
  double tested = 0;
  for (std::size_t i : members) tested = std::max(tested, loo.distance[i]);
  const double cap = *std::find_if(candidate_distances.begin(), candidate_distances.end(),
                                   [tested](double d) { return d >= tested; });
  double best = std::numeric_limits<double>::infinity();
  for (double reach : candidate_distances) {
    if (reach > cap) break;
    double total = 0;
    for (std::size_t i : members) total += loo.distance[i] <= reach ? neighbour[i] : below[i];
    if (total <= best) {
      best = total;
      p.max_distance = reach;
    }
  }
  return p;
}

// The policy's choices for each regime of a group (ShapeRegime): from the
// regime's own shapes where it has kRegimeShapes of them, else from all the
// group's shapes.
void ConfigPredictor::choose_policy(ShapeGroup& g) const {
  const ShapeGroup::Policy given{options_.policy_rule == NeighbourRule::vote,
                                 options_.max_distance.value_or(default_max_distance)};
  g.policy = {given, given};
  const bool automatic_rule = options_.policy_rule == NeighbourRule::automatic;
  if (g.shapes.size() < min_shapes_to_choose || (!automatic_rule && options_.max_distance)) return;

  const ShapeGroup::LeaveOneOut loo = g.leave_one_out(options_.vote_neighbours, options_.tie_tolerance);
  std::vector<double> below;
  for (std::size_t i = 0; i < g.shapes.size(); ++i)
    below.push_back(g.regret(i, fallback(g.shapes[i], g.dtype, g.threads, g.layout).knobs));
  std::vector<std::size_t> all(g.shapes.size()), regime[2];
  std::iota(all.begin(), all.end(), std::size_t(0));
  for (std::size_t i : all) regime[regime_of(g.shapes[i]) == ShapeRegime::thin].push_back(i);
  const ShapeGroup::Policy whole = ShapeGroup::choose_policy(options_, loo, below, all);
  for (int r = 0; r < 2; ++r)
    g.policy[r] = regime[r].size() >= kRegimeShapes
                      ? ShapeGroup::choose_policy(options_, loo, below, regime[r])
                      : whole;
}

}  // namespace sfc
