// rank_configs: orders the 64 (K_layers, k_block_factor) configurations of a
// shape by what is known without timing it -- the analytical model's predicted
// times and the measured times of the nearest tuned shapes -- and says how
// sure that order is, so that a ranked search (sfc/tuner.hpp) times a short
// list instead of all 64.
//
//   std::vector<RankingNeighbour> near = nearest_neighbours(shape, tuned, 4);
//   ModelPrediction p = model.predict(shape, dtype, threads, layout);
//   ConfigRanking r = rank_configs(shape, &p, near);
//   std::vector<Knobs> timed = r.shortlist(ConfigSet bits, effective_of);
//
// Each source gives every configuration a log time relative to its own best;
// the ranking is their weighted mean (a neighbour weighs 1 / (distance + 1/8)
// in log2(M, N, K) space, the model RankingOptions::model_weight). A neighbour
// that lacks a configuration (a ranked search timed only a short list) counts
// it at its median measured time. The confidence (0..1) is the
// mean of three parts: whether the sources' own best configurations are among
// the ranking's leaders (agreement), how near the nearest tuned shape is, and
// the ranking's margin between its best two; the shortlist is the longer the
// lower it is.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/gemm.hpp"
#include "sfc/knobs.hpp"

namespace sfc {

// A tuned shape whose measured times inform the ranking of another.
struct RankingNeighbour {
  GemmShape shape;
  std::array<double, kConfigCount> seconds;  // by Knobs::index(); NaN: not measured
  double distance = 0;                       // to the shape being ranked (nearest_neighbours sets it)
  // Tuned on another machine (a --prior table): weighs foreign_weight of a
  // neighbour of this machine, and its nearness adds no confidence.
  bool foreign = false;
};

struct RankingOptions {
  int min_shortlist = 3;   // configurations timed (distinct plans) at full confidence
  int max_shortlist = 10;  // ... and at none
  // The leaders (ranked first) whose grid neighbours (K_layers +-1 or
  // k_block_factor +-1) join the shortlist: the ranking is often one step off.
  int leaders = 1;
  // Weights: a neighbour at log2 distance d weighs 1 / (d + 1/8), another
  // machine's foreign_weight times that, the model model_weight (chosen on
  // replays: docs/experiments/2026-12-07-ranked-search-replay.md).
  double model_weight = 0.3;
  // RankingContext scales model_weight by exp(-r / model_trust), r the mean
  // regret of the model's picks on the nearest shapes tuned on this machine;
  // 0: a fixed weight.
  double model_trust = 0.03;
  double foreign_weight = 0.25;
  double margin_scale = 0.05;   // a log-time margin this large is full confidence
  double distance_scale = 1.0;  // proximity part: exp(-distance / this)
};

// log2-space distance between two shapes: the Euclidean distance of (log2 M, log2 N, log2 K).
double log2_distance(const GemmShape& a, const GemmShape& b);

// The `count` tuned shapes nearest `shape`, nearest first, with distances set
// (a neighbour equal to `shape` itself included).
std::vector<RankingNeighbour> nearest_neighbours(const GemmShape& shape,
                                                 std::span<const RankingNeighbour> tuned, std::size_t count);

struct ConfigRanking {
  std::array<Knobs, kConfigCount> order;     // most promising first
  std::array<double, kConfigCount> score{};  // by Knobs::index(): estimated log time over the best (>= 0)
  double confidence = 0;                     // 0..1
  int length = 0;                            // distinct plans to time, from the confidence
  int leaders = 1;                           // RankingOptions::leaders
  int sources = 0;                           // the model and the neighbours that spoke

  // The configurations to time: the first `length` distinct plans of `order`
  // among `allowed` (bits by Knobs::index()), then the grid neighbours of the
  // first `leaders` of them that are new plans. `effective` maps a
  // configuration to the plan it runs as (clamped configurations share one);
  // empty: every configuration is its own.
  std::vector<Knobs> shortlist(std::uint64_t allowed = ~std::uint64_t{0},
                               const std::function<Knobs(Knobs)>& effective = {}) const;
};

// Throws sfc::Error for an invalid shape or options (min_shortlist < 1 or
// above max_shortlist). With neither a model nor neighbours every
// configuration ties: the order is (1, 1), (1, 2), ... and confidence 0.
ConfigRanking rank_configs(const GemmShape& shape, const ModelPrediction* model,
                           std::span<const RankingNeighbour> neighbours, const RankingOptions& options = {});

}  // namespace sfc
