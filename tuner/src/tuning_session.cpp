#include "sfc/tuning_session.hpp"

#include <chrono>
#include <vector>

#include "sfc/error.hpp"
#include "tuning_progress.hpp"

namespace sfc {

SessionSummary tune_grid(TuningStore& store, const Platform& platform, const ShapeGrid& grid,
                         const SessionOptions& options, const std::atomic<bool>* stop) {
  if (options.tune.threads != platform.threads)
    throw Error("the tuner runs " + std::to_string(options.tune.threads) +
                " threads but the platform records " + std::to_string(platform.threads));
  const auto start = std::chrono::steady_clock::now();
  const Tuner tuner(options.tune);
  const DType dtype = options.tune.dtype;
  SessionSummary summary{.platform_hash = platform.hash(), .shapes = grid.size()};
  store.upsert_platform(platform);

  // What each shape still needs, from what the store holds.
  struct Pending {
    GemmShape shape;
    std::vector<Measurement> prior;
  };
  std::vector<Pending> pending;
  for (const GemmShape& shape : grid.shapes()) {
    std::vector<Measurement> prior;
    if (!options.force)
      prior =
          store.measurements({summary.platform_hash, dtype, platform.threads, options.tune.layout, shape});
    if (tuner.has_work(options.configs, prior))
      pending.push_back({shape, std::move(prior)});
    else
      ++summary.already_done;
  }

  std::vector<GemmShape> pending_shapes;
  for (const Pending& p : pending) pending_shapes.push_back(p.shape);
  TuningProgress progress(options.progress, grid.size(), summary.already_done, pending_shapes);
  for (const Pending& p : pending) {
    if (stop && stop->load()) {
      summary.interrupted = true;
      break;
    }
    progress.start_shape();
    const ShapeTuning tuning = tuner.tune(p.shape, options.configs, p.prior, stop,
                                          [&](const TuneStep& step) { progress.step(step); });
    // One transaction per shape: a kill before this line loses only this shape.
    summary.measurements += store.record(summary.platform_hash, tuning.measurements);
    if (tuning.interrupted) {
      summary.interrupted = true;
      break;
    }
    ++summary.tuned;
    progress.finish_shape(
        store.winner({summary.platform_hash, dtype, platform.threads, options.tune.layout, p.shape}));
  }
  progress.clear();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace sfc
