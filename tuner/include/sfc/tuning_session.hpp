// tune_grid: tunes every shape of a grid into a TuningStore, one transaction
// per shape, resuming where an earlier run of the same grid stopped.
//
// A shape counts as done when the store already holds what the Tuner would
// measure for it (so a rerun measures only what is missing; `force` measures
// everything again, adding to the earlier measurements). When `stop` becomes
// true, the configuration being timed finishes, what the current shape has
// measured is committed, and the run ends with `interrupted` set.
//
// Several tuners may share one store: each measures a shape only under its
// claim (sfc/shape_claims.hpp) and only what the store lacks then, waits for
// shapes another tuner holds, and ends when its whole grid is done by someone.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sfc/config_set.hpp"
#include "sfc/platform.hpp"
#include "sfc/ranked_search.hpp"
#include "sfc/shape_grid.hpp"
#include "sfc/tuner.hpp"
#include "sfc/tuning_store.hpp"

namespace sfc {

enum class ProgressStyle {
  automatic,  // a redrawn bar when stderr is a terminal, one log line per shape otherwise
  quiet,      // nothing
};

struct SessionOptions {
  TuneOptions tune;  // tune.threads must equal the platform's threads
  ConfigSet configs = ConfigSet::all();
  bool force = false;
  ProgressStyle progress = ProgressStyle::automatic;
  // A ranked search (tune.search == ranked) tunes the pending shapes in
  // spread_order() and ranks each with `model` (calibrated, or none), the
  // shapes of this selection the store holds, those of `prior` (same dtype,
  // threads and layout) and the shapes tuned before it in this run.
  std::optional<AnalyticalModel> model{};
  std::vector<TunedShape> prior{};
  RankingOptions ranking{};
};

struct SessionSummary {
  std::string platform_hash;
  std::size_t shapes = 0;           // in the grid
  std::size_t already_done = 0;     // complete in the store before this run
  std::size_t tuned = 0;            // completed by this run
  std::size_t tuned_elsewhere = 0;  // completed meanwhile by another tuner sharing the database
  std::int64_t measurements = 0;    // rows this run added
  // A ranked search's spending over the shapes it tuned (sfc/racing.hpp).
  std::int64_t screened = 0, fully_timed = 0, runs = 0;
  bool interrupted = false;
  double seconds = 0;
  // The noise guard's notes (sfc/noise_guard.hpp): the shapes timed again
  // for noise, those whose runs still spread beyond kNoiseSpreadLimit
  // ("MxNxK: why"), whether the load average exceeded the cores while a
  // shape was tuned, and the highest load read.
  std::size_t retimed = 0;
  std::vector<std::string> noisy_shapes;
  bool busy = false;
  double peak_load = 0;
};

SessionSummary tune_grid(TuningStore& store, const Platform& platform, const ShapeGrid& grid,
                         const SessionOptions& options, const std::atomic<bool>* stop = nullptr);

}  // namespace sfc
