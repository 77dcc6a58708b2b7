// race: the timing half of a ranked search (sfc/tuner.hpp, TuneOptions::search).
// A short list of configurations (sfc/config_ranking.hpp) is
//   1. screened: one short timing each (the pruning screen's runs), then the
//      screen leader's grid neighbours, while that moves the leader (`climb`);
//   2. cut: what screened slower than (1 + screen_drop) x the best screen is dropped;
//   3. raced: the survivors are timed fully in rounds of `round_reps` runs,
//      together; after each round those slower than the leader by more than this
//      shape's measured noise are dropped, and the race stops when only the
//      leader is left (it is ahead beyond the noise) or after `max_rounds`.
// The noise is measured, not assumed: the median over the survivors of the
// spread of their full runs ((mean - min) / min), divided by the square root
// of the runs behind each fastest time, times `noise_multiple`, and never
// below `min_gap`.
//
// The timing is injected (RaceTimer), so the same race runs on the engine
// (Tuner), on stored runs (sfc/ranked_replay.hpp) and on a fake in tests.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sfc/knobs.hpp"

namespace sfc {

struct RaceOptions {
  // After the short list's screen, the screen leader's grid neighbours
  // (K_layers +-1, k_block_factor +-1) not screened yet are screened too,
  // up to `climb` times, until the leader stays (a hill climb on the
  // screens: the ranking is often a step off).
  int climb = 2;
  double screen_drop = 0.03;    // after the screen: dropped beyond (1 + this) x the best screen
  int round_reps = 3;           // timed runs per survivor per full round
  int max_rounds = 2;           // full rounds at most
  double noise_multiple = 2.0;  // the leader is ahead when the gap exceeds this many noise units
  double min_gap = 0.01;        // ... and this fraction of its time, whatever the noise
};

// What one timing of a configuration gave.
struct RaceRuns {
  Knobs effective{};  // the plan it ran as (clamped configurations share one)
  int reps = 0;       // timed runs
  double min_s = 0, mean_s = 0, stddev_s = 0;
};

// Times `configs` (distinct plans) together, a screen or a full round; one
// entry per configuration, in order. Nullopt when it was stopped.
using RaceTimer =
    std::function<std::optional<std::vector<RaceRuns>>(const std::vector<Knobs>& configs, bool screening)>;

struct RaceResult {
  Knobs winner{0, 0};  // the fastest full timing (0 0 when none)
  double winner_seconds = 0;
  int screened = 0;     // distinct plans screened
  int fully_timed = 0;  // distinct plans timed fully (at least one round)
  int rounds = 0;       // full rounds run
  long long runs = 0;   // timed runs of all timings (screens included)
  bool interrupted = false;
};

// Throws sfc::Error for invalid options (negative screen_drop, round_reps or
// max_rounds below 1, a negative noise_multiple or min_gap).
void check(const RaceOptions& options);

// `allowed` (bits by Knobs::index()) limits the climb; `plan` maps a
// configuration to the plan it runs as, so that the climb skips plans
// screened already (empty: it learns them from the timings only).
RaceResult race(const std::vector<Knobs>& shortlist, const RaceTimer& time, const RaceOptions& options,
                std::uint64_t allowed = ~std::uint64_t{0}, const std::function<Knobs(Knobs)>& plan = {});

}  // namespace sfc
