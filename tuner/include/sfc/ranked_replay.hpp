// replay_ranked: the ranked search (sfc/tuner.hpp, TuneOptions::search) run
// on exhaustively tuned shapes without timing anything, to choose its
// thresholds and see what it spends and loses (`sfc-tune evaluate --search
// ranked --replay DB`).
//
// Each shape is ranked as a live run would rank it (the model from the
// table's calibration, the nearest shapes replayed before it and those of a
// prior table), in spread_order(), and its short list raced (sfc/racing.hpp);
// each "timing" is a draw from the stored runs. A stored time is its
// configuration's fastest run; the tables keep no other runs, so a run is
// drawn as stored x (1 + e), e from a fitted run distribution: exponential
// with mean `noise` (interference only adds time), and with probability
// `outlier_rate` a slow run, uniform in [0.2, 1] (a preempted thread). The
// draws are seeded: a replay gives the same answer every time.
//
// The regret of a shape is stored(chosen) / stored(best) - 1. The same draws
// also replay an exhaustive tuning (every plan, warm-up + reps runs), whose
// regret is what a second exhaustive run would lose to noise, and whose runs
// and run-seconds (the stored times summed over the runs drawn) are what the
// ranked search saves against.
#pragma once
#include <cstdint>
#include <vector>

#include "sfc/config_ranking.hpp"
#include "sfc/racing.hpp"
#include "sfc/regret.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

struct ReplayOptions {
  RankingOptions ranking{};
  RaceOptions race{};
  std::uint64_t seed = 1;
  double noise = 0.03;         // mean relative excess of a run over the fastest
  double outlier_rate = 0.05;  // share of runs that are slow outliers
  int warmup = 2, reps = 10;   // of the exhaustive tuning replayed beside it (tune's defaults)
  bool use_model = true;       // rank with the table's calibrated model
};

struct ReplayedShape {
  GemmShape shape;
  ConfigRanking ranking;
  RaceResult race;
  Knobs best;              // the stored winner (fastest stored time)
  int best_rank = 0;       // its position in ranking.order (0: ranked first)
  double regret = 0;       // of race.winner
  double run_seconds = 0;  // stored times summed over the runs drawn (warm-ups included)
  Knobs exhaustive_winner;
  double exhaustive_regret = 0;
  long long exhaustive_runs = 0;
  double exhaustive_run_seconds = 0;
};

struct ReplayReport {
  std::vector<ReplayedShape> shapes;  // in the order replayed
  RegretSummary regret, exhaustive_regret;
  double mean_screened = 0, mean_fully_timed = 0, mean_shortlist = 0;
  long long runs = 0, exhaustive_runs = 0;
  double run_seconds = 0, exhaustive_run_seconds = 0;
};

// Replays the shapes of `tuned` (one dtype, thread count and layout; each
// with every configuration measured), learning from `prior` (shapes of the
// same dtype, threads and layout from elsewhere; may be empty). `model` as
// RankingContext takes it. Throws sfc::Error when `tuned` is empty or a
// shape lacks a measurement.
ReplayReport replay_ranked(const std::vector<TunedShape>& tuned, const std::vector<TunedShape>& prior,
                           const std::optional<AnalyticalModel>& model, const ReplayOptions& options);

}  // namespace sfc
