// Tuner: finds the fastest (K_layers, k_block_factor) of one shape by timing
// the configurations of a ConfigSet with cold inputs (sfc/measure.hpp):
// `warmup` untimed runs, then `reps` timed ones, in rounds that visit every
// configuration once (time_rounds says why). A configuration's time is
// its fastest run (min); mean and standard deviation are kept too. Why the
// min: on a shared machine interference only ever adds time, and one
// preempted thread stalls the whole call (the others take its waiting tasks,
// not the one it holds: core/src/task_stretches.hpp), so the mean of a
// sub-millisecond GEMM's runs moves far from run to run, and winners chosen by
// the min carry from one tuning to the next much better (docs/tuning.md). The
// operands use the layout of TuneOptions::layout.
//
//   sfc::Tuner tuner({.dtype = sfc::DType::f32, .threads = 2, .reps = 10});
//   sfc::ShapeTuning t = tuner.tune({1024, 1024, 1024}, sfc::ConfigSet::all());
//   t.result.k_layers, t.result.k_block_factor   // the winner; t.measurements to store
//
// Requests that clamp to the same effective plan (K_layers and
// k_block_factor are clamped to the K blocks there are) are timed once and
// recorded under each request.
//
// Pruning (prune_margin >= 0) first screens every configuration with one
// warm-up and a few timed runs (two, up to five while they took under 20 ms),
// then times fully only those whose screening time (the fastest run) is
// within (1 + prune_margin) of the best screening time; the others keep their
// screening measurement (marked as such) and cannot win.
//
// Ranked search (TuneOptions::search = ranked) times only a short list,
// ranked beforehand (sfc/config_ranking.hpp), and races it (sfc/racing.hpp):
// a screen of each (flagged, as pruning's), then full rounds of
// race.round_reps runs for the survivors until the leader is ahead beyond the
// shape's measured noise. Each round is recorded as a full measurement of its
// own (a configuration's time is the fastest of them), so a ranked database
// exports, merges and can be tuned exhaustively later like any other.
#pragma once
#include <atomic>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "sfc/config_set.hpp"
#include "sfc/gemm.hpp"
#include "sfc/racing.hpp"
#include "sfc/records.hpp"
#include "sfc/shape_grid.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

enum class Search { exhaustive, ranked };
std::string_view to_string(Search search);   // "exhaustive", "ranked"
Search parse_search(std::string_view text);  // throws sfc::Error naming the choices

// The screen of pruning and of a ranked search: kScreenWarmup untimed runs,
// then kScreenMinReps timed ones, more (up to kScreenReps) while they took
// less than kScreenSeconds (tuner.cpp says why).
inline constexpr int kScreenWarmup = 1, kScreenMinReps = 2, kScreenReps = 5;
inline constexpr double kScreenSeconds = 0.02;

// The configuration `c` runs as on `shape` (the engine clamps K_layers and
// k_block_factor to the K blocks there are), without planning it.
Knobs effective_config(const GemmShape& shape, DType dtype, int threads, Layout layout, Knobs c);

struct TuneOptions {
  DType dtype = DType::f32;
  int threads = 0;           // 0: default_threads()
  int warmup = 2;            // untimed runs before the timed ones
  int reps = 10;             // timed runs (at most, with a budget)
  double prune_margin = -1;  // < 0: time every configuration fully
  // The entry timed: execute() on the blocked layout, or gemm() on plain
  // row/column-major matrices with its packing (they have different winners,
  // see db/src/schema.cpp version 3).
  Layout layout = Layout::blocked;
  // > 0: a configuration's warm-up and timed runs each stop once they took
  // this many seconds (at least one timed run), so that a large shape costs
  // a few runs and a small one all `reps`; the measurement records the runs.
  double budget_seconds = 0;
  // The plans timed together in rounds hold their scratch (copies of C,
  // packing buffers) at once: a shape whose plans need more than this is
  // timed in groups of configurations, each in rounds (at least one plan a
  // group).
  std::size_t round_workspace_bytes = std::size_t(1) << 30;
  // After the full timing, up to `confirm` of the fastest configurations
  // within (1 + confirm_margin) of the best are timed again, together, and
  // their new runs recorded beside the first ones (a configuration's time is
  // the fastest of all its runs). A shape that affords only two or three runs
  // per configuration (the budget) leaves its leaders apart by less than the
  // noise; this spends a few more runs where the choice is made. 0: off.
  int confirm = 0;
  double confirm_margin = 0.10;
  // ranked: race a short list (race(); tune() races the whole ConfigSet).
  // The exhaustive search ignores `race`.
  Search search = Search::exhaustive;
  RaceOptions race{};
};

// Reported after each configuration tune() handles.
struct TuneStep {
  bool screening = false;   // the pruning screen, or the full timing
  int done = 0, total = 0;  // configurations of this phase
  int best_k_layers = 0;    // best full measurement so far (0: none yet)
  int best_k_block_factor = 0;
  double best_seconds = 0;
};

struct ShapeTuning {
  // The winner among this call's full measurements (0 0 when there is none)
  // and the times this call took (NaN where it timed nothing).
  TunedShape result;
  std::vector<Measurement> measurements;  // everything this call timed, to record
  bool interrupted = false;               // `stop` ended the search early
};

class Tuner {
 public:
  explicit Tuner(const TuneOptions& options);  // throws sfc::Error on bad options

  const TuneOptions& options() const { return options_; }

  // Whether tune() would time anything, given `prior`: the stored
  // measurements of the shape with this dtype and thread count. A ranked
  // search is done once any configuration of `configs` is fully measured.
  bool has_work(const ConfigSet& configs, std::span<const Measurement> prior) const;

  // Times what `prior` does not hold yet: without pruning, every configuration
  // without a full measurement; with pruning, the screen of every
  // configuration without any measurement, then the full timing of the
  // survivors that lack one. `stop` is checked between configurations.
  ShapeTuning tune(const GemmShape& shape, const ConfigSet& configs, std::span<const Measurement> prior = {},
                   const std::atomic<bool>* stop = nullptr,
                   const std::function<void(const TuneStep&)>& on_step = {}) const;

  // The ranked search of `shape` over `shortlist` (ranked first), every
  // timing recorded; `summary` (optional) receives what the race spent;
  // the race's climb stays within `allowed` (bits by Knobs::index()).
  ShapeTuning race(const GemmShape& shape, const std::vector<Knobs>& shortlist,
                   const std::atomic<bool>* stop = nullptr,
                   const std::function<void(const TuneStep&)>& on_step = {}, RaceResult* summary = nullptr,
                   std::uint64_t allowed = ~std::uint64_t{0}) const;

  // The configuration `c` runs as on `shape` (the engine clamps K_layers and
  // k_block_factor to the K blocks there are).
  Knobs effective(const GemmShape& shape, Knobs c) const;

 private:
  TuneOptions options_;
};

}  // namespace sfc
