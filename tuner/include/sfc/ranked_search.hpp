// What a ranked search ranks each shape with (sfc/config_ranking.hpp), and
// the order it tunes a shape list in. Shared by `sfc-tune tune --search
// ranked` (tuning_session.hpp) and its replay (ranked_replay.hpp).
//
//   RankingContext context(model, {});
//   context.add(table_shape.shape, seconds);          // a --prior table, the database
//   for (GemmShape s : spread_order(shapes, context.shapes())) {
//     ConfigRanking r = context.rank(s, dtype, threads, layout);
//     ...time r.shortlist()..., then context.add(s, what was measured);
//   }
#pragma once
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/config_ranking.hpp"
#include "sfc/records.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

// M, N and K equal (GemmShape has no operator==).
inline bool same_shape(const GemmShape& a, const GemmShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}

// How many tuned neighbours a ranking consults, of this machine and as many
// of others'.
inline constexpr std::size_t kRankingNeighbours = 8;
// Tuned neighbours the model's track record needs before it counts.
inline constexpr int kModelRecordShapes = 2;

class RankingContext {
 public:
  // `model` (a calibrated one, or none) prices every configuration.
  RankingContext(std::optional<AnalyticalModel> model, RankingOptions options);

  // A tuned shape the later rankings learn from: its time per configuration
  // (NaN where it has none); `foreign` when another machine tuned it (a
  // prior table: RankingNeighbour::foreign).
  void add(const GemmShape& shape, const std::array<double, kConfigCount>& seconds, bool foreign = false);
  // The same, from stored measurements of one shape: a configuration's time is
  // its fastest full run, else its fastest screen.
  void add(const GemmShape& shape, std::span<const Measurement> measurements);

  ConfigRanking rank(const GemmShape& shape, DType dtype, int threads, Layout layout) const;

  std::vector<GemmShape> shapes(bool with_foreign = true) const;  // the tuned shapes added so far
  bool has_model() const { return model_.has_value(); }

  // The mean regret of the model's pick on `near` (tuned shapes: a pick they
  // did not time counts at their median time); 0 without a model or below
  // kModelRecordShapes.
  double model_regret(std::span<const RankingNeighbour> near, DType dtype, int threads, Layout layout) const;

 private:
  std::optional<AnalyticalModel> model_;
  RankingOptions options_;
  std::vector<RankingNeighbour> tuned_, foreign_;
};

// The seconds of every configuration of a stored shape (NaN where unmeasured).
std::array<double, kConfigCount> seconds_of(const TunedShape& shape);

// `shapes` reordered so that each next shape is the one farthest (log2
// distance) from every shape before it and from `known` (shapes already
// tuned): the range is spread over first, so that the rankings of the later
// shapes have near neighbours. Starts with the shape nearest the centre of
// the list when nothing is known. Deterministic (ties: the earlier shape).
std::vector<GemmShape> spread_order(std::vector<GemmShape> shapes, std::span<const GemmShape> known = {});

}  // namespace sfc
