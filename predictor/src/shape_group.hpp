// The tuned shapes of one (dtype, threads, layout) as the predictor keeps
// them: log2 points in a nanoflann k-d tree, each shape's winner and the
// throughput of every configuration relative to it, and the two neighbour
// rules and their leave-one-out test. Private to predictor/src.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <nanoflann.hpp>
#include <numeric>
#include <vector>

#include "sfc/predictor.hpp"

namespace sfc {

using Point = std::array<double, 3>;

inline Point log2_point(const GemmShape& s) {
  return {std::log2(double(s.m)), std::log2(double(s.n)), std::log2(double(s.k))};
}

// A neighbour at distance 0 would otherwise outweigh the rest infinitely;
// 1/8 (a factor of 2^(1/8) in one size) keeps near ones dominant.
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
// The rates (of a thread's bandwidth share) at which the model's re-reads are
// fitted, the default first.
constexpr std::array<double, 3> candidate_reread_rates = {kRereadRate, 0.25, 1};
// Fewer tuned shapes than this and the leave-one-out choices are not made.
constexpr std::size_t min_shapes_to_choose = 3;

inline bool has_winner(const TunedShape& s) { return s.winner().valid(); }

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

  // `tolerance`: PredictorOptions::tie_tolerance.
  void add(const TunedShape& s, double tolerance) {
    shapes.push_back(s.shape);
    points.push_back(log2_point(s.shape));
    const double best = best_seconds(s);
    std::array<float, kConfigCount> row{};
    for (int i = 0; i < kConfigCount; ++i)  // not measured (NaN): 0, by a comparison that raises no flag
      row[i] = std::isgreater(s.seconds[i], 0.0f) ? float(std::min(1.0, best / s.seconds[i])) : 0.0f;
    throughput.push_back(row);
    // (1, 1) where it ties the fastest, else the winner the table names;
    // without one, the fastest time stands in.
    const int answer = plain_or_best(row, tolerance);
    winners.push_back(answer == 0 || !has_winner(s) ? Knobs::at(answer) : s.winner());
  }

  // The index of (1, 1) -- one layer, one round: no copy of C, each C tile
  // written once -- where its score is within `tolerance` of the best score
  // in `score`, else of the best.
  template <class Scores>
  static int plain_or_best(const Scores& score, double tolerance) {
    const int best = int(std::max_element(std::begin(score), std::end(score)) - std::begin(score));
    return score[0] > 0 && score[0] >= score[best] / (1.0 + tolerance) ? 0 : best;
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
  Knobs vote(const GemmShape& shape, int neighbours, double tolerance, std::size_t skip = npos) const {
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
    return Knobs::at(plain_or_best(score, tolerance));
  }

  // Regret of `knobs` on tuned shape i, as the fits (predictor_fit.cpp) sum
  // it: its time over the winner's, less 1, counted at most 1 (twice as
  // slow), which is also what a configuration never measured counts. The cap
  // is for pruned tables: a pruned configuration keeps one screening run, and
  // a rare run reads many times too slow; uncapped, that one run outweighed
  // the other shapes together and chose the policy's reach
  // (docs/experiments/2026-12-02-screen-retune-zen5.md).
  double regret(std::size_t i, Knobs knobs) const {
    const float t = throughput[i][knobs.index()];
    return t > 0 ? std::min(1.0 / t - 1.0, 1.0) : 1.0;
  }

  // Each tuned shape predicted from all the others: the distance to its
  // nearest other shape and the regret of each neighbour rule.
  struct LeaveOneOut {
    std::vector<double> distance, nearest, vote;
  };
  LeaveOneOut leave_one_out(int neighbours, double tolerance) const {
    LeaveOneOut loo;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      std::array<std::uint32_t, 2> index;
      std::array<double, 2> distance;
      this->nearest(shapes[i], 2, index.data(), distance.data());
      const std::size_t other = index[0] == i ? 1 : 0;
      loo.distance.push_back(distance[other]);
      loo.nearest.push_back(regret(i, winners[index[other]]));
      loo.vote.push_back(regret(i, vote(shapes[i], neighbours, tolerance, i)));
    }
    return loo;
  }

  static constexpr std::size_t npos = std::size_t(-1);
  // The policy's choices for this group, per ShapeRegime.
  struct Policy {
    bool votes = false;
    double max_distance = default_max_distance;
  };
  std::array<Policy, 2> policy{};  // [bulk, thin]
  const Policy& policy_of(ShapeRegime regime) const { return policy[regime == ShapeRegime::thin]; }
  const Policy& policy_for(const GemmShape& s) const { return policy_of(regime_of(s)); }
  // The choices for the shapes `members` (indices) from their leave-one-out
  // regrets and `below`, each shape's regret in the tier below the nearest
  // one (predictor_fit.cpp).
  static Policy choose_policy(const PredictorOptions& options, const LeaveOneOut& loo,
                              const std::vector<double>& below, const std::vector<std::size_t>& members);
};

}  // namespace sfc
