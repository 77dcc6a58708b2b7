// ConfigPredictor: which (K_layers, k_block_factor) should a GEMM of a shape
// that was never tuned use? Built once from tuning tables, then queried many
// times (const, thread-safe, no allocation per query).
//
// The shipped policy answers in tiers, each answer saying which one did:
//   exact    the shape was tuned: its measured winner, or (1, 1) where
//            that ties it (PredictorOptions::tie_tolerance)
//   nearest  a tuned shape lies within the nearest tier's reach in log2(M, N, K)
//            space (see PredictorOptions::max_distance): the neighbour rule below
//   model    the AnalyticalModel, when the platform is calibrated
//   default  K_layers = 1 with the L2-fitting k_block_factor (the paper's 2D
//            algorithm: never far off, never the reason for a bad surprise)
//
// Neighbour rules, over the tuned shapes of the same dtype, threads and layout
// (the entry they were tuned through; a layout with none borrows the other
// plain layout's shapes, transposed, or else the blocked layout's):
//   nearest  the winner of the single nearest tuned shape
//   vote     over the k nearest, the configuration with the best mean
//            normalised throughput (time of the shape's winner / time of the
//            configuration), each neighbour weighted by 1 / (distance + 1/8)
// By default the policy uses whichever of the two does better on the tuned
// shapes themselves (see NeighbourRule).
#pragma once
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/platform.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

enum class Tier { exact, nearest, model, default_config };
std::string_view to_string(Tier tier);  // "exact", "nearest", "model", "default"

struct Answer {
  Knobs knobs;
  Tier tier = Tier::default_config;
  // How the platform whose data answered matches the machine the predictor
  // serves (sfc/platform.hpp); exact when it was built without one.
  PlatformMatch platform = PlatformMatch::exact;
  // log2-space distance to the nearest tuned shape of the same dtype and
  // threads, and that shape; +infinity and zeros when there is none.
  double distance = std::numeric_limits<double>::infinity();
  GemmShape nearest;
  // Set when the tuned shapes that answered are another layout's (a plain
  // layout with none of its own borrows the other's, transposed, else the
  // blocked layout's): the tier is then that layout's, not this one's.
  std::optional<Layout> borrowed_from;
  // exact: how many of the kConfigCount configurations the shape has measured
  // (0 for the other tiers). Online tuning times a ranked shortlist, so an
  // exact answer with fewer than kConfigCount is "timed N of 64", not the
  // winner of an exhaustive search.
  int measured_configs = 0;
};

// One predictor on its own, so `sfc-tune evaluate` can score each.
enum class Predictor { nearest, vote, model, policy };
std::string_view to_string(Predictor predictor);  // "nearest", "vote", "model", "policy"

// The neighbour rule the policy's nearest tier uses. `automatic` picks, per
// dtype and thread count, the rule with the lower leave-one-out mean regret
// on the tuned shapes themselves (each predicted from all the others), so the
// better rule ships for each platform's own data.
enum class NeighbourRule { nearest, vote, automatic };
std::string_view to_string(NeighbourRule rule);  // "nearest", "vote", "auto"

// The policy chooses its neighbour rule and reach twice per group: for thin
// shapes (one of M, N, K below kThinBelow, one block: their blocks, kernels
// and winners follow rules of their own, and their microsecond timings are a
// table's noisiest) and for the rest, each from its own shapes' leave-one-out
// (a regime with fewer than kRegimeShapes tuned shapes takes the choice made
// over all of them): thin shapes had decided the policy's rule and reach for
// every shape (docs/experiments/2026-12-02-thin-policy-bf16-pairs-zen5.md).
enum class ShapeRegime { bulk, thin };
inline constexpr std::int64_t kThinBelow = 64;
inline constexpr std::size_t kRegimeShapes = 12;
ShapeRegime regime_of(const GemmShape& shape);
std::string_view to_string(ShapeRegime regime);  // "bulk", "thin"

struct PredictorOptions {
  // The nearest tier answers within this log2 distance. Unset: chosen per
  // dtype and thread count from the tuned shapes themselves, as the reach
  // within which a neighbour's answer beat the model (or the default) when
  // each shape was predicted from the others; 1.0 with fewer than 3 shapes.
  std::optional<double> max_distance;
  int vote_neighbours = 4;  // k of the vote rule
  NeighbourRule policy_rule = NeighbourRule::automatic;
  // The fraction of L2 that one round's A and B panels may fill (the L2 rule
  // for k_block_factor, in the model and the default tier). Unset: 0.5 (the
  // paper's), or, where a thread count has tuned shapes, the fraction among
  // 0.25..64 and unlimited whose answers have the lowest regret on them
  // (fitted together with the model's re-read rate; a fixed fraction keeps
  // the default rate), for shapes within the tuned shapes' sizes; beyond
  // them, 0.5 and the default rate.
  std::optional<double> l2_fraction;
  // A tuned shape whose (1, 1) -- one layer, one round: no copy of C, each C
  // tile written once -- runs within this fraction of its winner's time
  // answers (1, 1), and so does the vote where (1, 1) scores within it of
  // the best. A winner that beats (1, 1) by less than a table's timing noise
  // is a bet on that noise, and the bet does not carry to the like machines
  // a table is deployed on, where (1, 1) ran faster
  // (docs/experiments/2026-12-05-ties-go-to-one-round-zen5.md). 0: the winner as tuned.
  double tie_tolerance = 0.02;
};

// The time a tuned shape is measured against: its winner's (the fastest full
// measurement; a pruned configuration's single screening run may be lower by
// luck), or the fastest stored time when no winner is set. +infinity when
// nothing was measured.
double best_seconds(const TunedShape& shape);

class ConfigPredictor {
 public:
  // Shapes are grouped by (dtype, threads, layout), one k-d tree per group.
  // Each table's calibration (gamma per core, beta shared by the threads)
  // serves the model tier at its thread count, and at thread counts no table
  // has, the calibration of the best-matching table with the nearest thread
  // count. `here`, the machine the answers are for, labels every answer with
  // its match and gives the L2 size of the model and default tiers; without
  // it every answer is `exact` and the tables' L2 sizes serve.
  explicit ConfigPredictor(const std::vector<TuningTable>& tables, PredictorOptions options = {},
                           const std::optional<Platform>& here = std::nullopt);
  ~ConfigPredictor();
  ConfigPredictor(ConfigPredictor&&) noexcept;
  ConfigPredictor& operator=(ConfigPredictor&&) noexcept;

  // The shipped policy. Throws sfc::Error for non-positive sizes or threads.
  Answer query(const GemmShape& shape, DType dtype, int threads, Layout layout = Layout::blocked) const;

  // One predictor alone. Throws sfc::Error when it cannot answer: no tuned
  // shape of that dtype and threads (nearest, vote), no calibration (model).
  Knobs predict(Predictor predictor, const GemmShape& shape, DType dtype, int threads,
                Layout layout = Layout::blocked) const;

  const PredictorOptions& options() const { return options_; }

  // The policy's choices for (dtype, threads, layout): the neighbour rule
  // (nearest or vote) and the log2 distance within which the nearest tier answers.
  // For the shapes of `regime` (see ShapeRegime).
  NeighbourRule policy_rule(DType dtype, int threads, Layout layout = Layout::blocked,
                            ShapeRegime regime = ShapeRegime::bulk) const;
  double policy_max_distance(DType dtype, int threads, Layout layout = Layout::blocked,
                             ShapeRegime regime = ShapeRegime::bulk) const;
  // The L2 fraction the model and default tiers use for `threads` threads,
  // and the rate (of a thread's bandwidth share) at which the model prices
  // what L2 fails to hold: the fitted ones, which answer shapes within the
  // tuned shapes' sizes.
  double l2_fraction(int threads) const;
  double reread_rate(int threads) const;
  // The share of L2 a round's tile slabs may take in the model's blocked
  // answers (kRoundSlabL2Fraction; +infinity where the fit dropped the cap).
  double round_slab_fraction(int threads) const;
  // How many tiles' slabs L2 must hold for a shared one to be read once
  // (kSharedSlabRoom, or the fit's choice).
  double shared_slab_room(int threads) const;
  // True when the model tier can answer for `threads` threads (a calibrated
  // table of that or another thread count).
  bool has_model(int threads) const { return model(threads) != nullptr; }

  // What the tables hold: one entry per (dtype, threads, layout) with tuned
  // shapes, and how the platform they came from matches this machine.
  struct Group {
    DType dtype;
    int threads;
    Layout layout;
    std::size_t shapes;
    PlatformMatch platform;
  };
  std::vector<Group> groups() const;

 private:
  struct ShapeGroup;
  // The tuned shapes that answer for a layout: its own, or borrowed (a plain
  // layout's sibling, whose shapes are then the query's transposed).
  struct GroupFor {
    const ShapeGroup* shapes = nullptr;
    bool transposed = false;
    std::optional<Layout> borrowed_from;  // set when `shapes` are another layout's
  };
  GroupFor group(DType dtype, int threads, Layout layout) const;
  // The model of one thread count: its platform's calibration and L2 rule.
  // `model` carries the L2 fraction and re-read rate fitted to the tuned
  // shapes, and whether the round-depth cap stays, and answers within the
  // box they span (`fitted_mn`: their largest M or N; `fitted_k`: their
  // largest K); beyond it `unfitted` (the paper's numbers, or the fixed
  // fraction) answers: fitted inside the tuned sizes and asked beyond, the
  // fitted pair did worse than the paper's numbers
  // (docs/experiments/2026-12-03-fit-reach-and-end-to-end-xeon.md).
  struct ThreadModel {
    int threads;
    AnalyticalModel model;
    PlatformMatch match;
    AnalyticalModel unfitted = model;
    std::int64_t fitted_mn = 0, fitted_k = 0;  // 0: not fitted
    const AnalyticalModel& for_shape(const GemmShape& shape) const {
      const bool inside = std::max(shape.m, shape.n) <= fitted_mn && shape.k <= fitted_k;
      return inside ? model : unfitted;
    }
  };
  // The calibrated model that serves `threads`: its own, or else the
  // best-matching one of the nearest thread count; null when none is calibrated.
  const ThreadModel* model(int threads) const;
  Answer fallback(const GemmShape& shape, DType dtype, int threads, Layout layout) const;  // model or default
  static Answer below_neighbours(const AnalyticalModel& model, const GemmShape& shape, DType dtype,
                                 int threads, Layout layout);  // the model's answer, or the default's
  void fit_l2_fraction(ThreadModel& model) const;
  void choose_policy(ShapeGroup& group) const;

  PredictorOptions options_;
  std::vector<std::unique_ptr<ShapeGroup>> groups_;
  // By platform thread count; calibrated or not (then only the L2 rule serves).
  std::vector<ThreadModel> models_;
  ThreadModel l2_rule_;  // uncalibrated: only the L2 rule, for the default tier
};

}  // namespace sfc
