#include "sfc/tuning_session.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/noise_guard.hpp"
#include "sfc/shape_claims.hpp"
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
  SessionSummary summary;
  summary.platform_hash = platform.hash();
  summary.shapes = grid.size();
  store.upsert_platform(platform);
  // The winners of this selection, read as every reader reads them: a store
  // readers refuse as inconsistent is refused here too, rather than its
  // shapes counted as done.
  store.winners({summary.platform_hash, dtype, platform.threads, options.tune.layout});

  // What each shape still needs, from what the store holds.
  struct Pending {
    GemmShape shape;
    std::vector<Measurement> prior;
    bool measured_elsewhere = false;  // another tuner held it: what it measured counts
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

  // A ranked search learns from every tuned shape it knows, and tunes the
  // pending shapes spread over their range first.
  const bool ranked = options.tune.search == Search::ranked;
  RankingContext context(options.model, options.ranking);
  if (ranked) {
    for (const TunedShape& p : options.prior) context.add(p.shape, seconds_of(p), true);
    // Ordered by shape: one neighbour per run of equal shapes.
    const std::vector<Measurement> stored =
        store.measurements({summary.platform_hash, dtype, platform.threads, options.tune.layout});
    for (std::size_t begin = 0, end = 0; begin < stored.size(); begin = end) {
      while (end < stored.size() && same_shape(stored[end].shape, stored[begin].shape)) ++end;
      context.add(stored[begin].shape, std::span(stored).subspan(begin, end - begin));
    }
    std::vector<GemmShape> shapes;
    for (const Pending& p : pending) shapes.push_back(p.shape);
    const std::vector<GemmShape> known = context.shapes(false);
    shapes = spread_order(std::move(shapes), known);
    std::vector<Pending> ordered;
    for (const GemmShape& shape : shapes) {
      const auto it = std::find_if(pending.begin(), pending.end(),
                                   [&](const Pending& p) { return same_shape(p.shape, shape); });
      ordered.push_back(std::move(*it));
      pending.erase(it);
    }
    pending = std::move(ordered);
  }

  std::vector<GemmShape> pending_shapes;
  for (const Pending& p : pending) pending_shapes.push_back(p.shape);
  TuningProgress progress(options.progress, grid.size(), summary.already_done, pending_shapes);

  // Other tuners may share the database: a shape is measured only under its
  // claim, and only what the store lacks once the claim is held. A shape
  // another tuner is on waits for a later sweep (so a claim's holder always
  // finishes or dies: the kernel then releases it), and the run ends when
  // every shape of its grid is done by someone.
  ShapeClaims claims(store.path());
  const std::string key_prefix = summary.platform_hash + "/" + std::string(to_string(dtype)) + "/" +
                                 std::to_string(platform.threads) + "/" +
                                 std::string(to_string(options.tune.layout)) + "/";
  // Tunes `p` if its claim is free; false when another tuner holds it.
  auto tune_claimed = [&](const Pending& p) {
    const auto claim = claims.try_claim(key_prefix + to_string(p.shape));
    if (!claim) return false;
    std::vector<Measurement> prior = p.prior;
    if (!options.force || p.measured_elsewhere)
      prior =
          store.measurements({summary.platform_hash, dtype, platform.threads, options.tune.layout, p.shape});
    if (!tuner.has_work(options.configs, prior)) {  // another tuner finished it meanwhile
      ++summary.tuned_elsewhere;
      progress.skip_shape(p.shape);
      return true;
    }
    progress.start_shape(p.shape);
    const std::optional<double> load_before = read_load_average();
    const auto on_step = [&](const TuneStep& step) { progress.step(step); };
    // Exhaustive: every configuration `known` lacks; ranked: a race over the
    // shortlist, whose runs teach the later shapes' rankings.
    const auto time_shape = [&](std::span<const Measurement> known) {
      if (!ranked) return tuner.tune(p.shape, options.configs, known, stop, on_step);
      const ConfigRanking ranking = context.rank(p.shape, dtype, platform.threads, options.tune.layout);
      const std::vector<Knobs> shortlist =
          ranking.shortlist(options.configs.bits(), [&](Knobs c) { return tuner.effective(p.shape, c); });
      RaceResult race;
      ShapeTuning raced = tuner.race(p.shape, shortlist, stop, on_step, &race, options.configs.bits());
      summary.screened += race.screened;
      summary.fully_timed += race.fully_timed;
      summary.runs += race.runs;
      std::vector<Measurement> learned(prior.begin(), prior.end());
      learned.insert(learned.end(), raced.measurements.begin(), raced.measurements.end());
      context.add(p.shape, learned);  // the later shapes learn from this one
      return raced;
    };
    const ShapeTuning tuning = time_shape(prior);
    // One transaction per shape: a kill before this line loses only this shape.
    summary.measurements += store.record(summary.platform_hash, tuning.measurements);
    if (tuning.interrupted) {
      summary.interrupted = true;
      return true;
    }
    NoiseVerdict noise = judge_shape_noise(tuning.measurements, load_before, platform.cores);
    if (noise.noisy) {  // timed once more (sfc/noise_guard.hpp)
      ++summary.retimed;
      const std::optional<double> again_before = read_load_average();
      const ShapeTuning again = time_shape({});
      summary.measurements += store.record(summary.platform_hash, again.measurements);
      if (again.interrupted) {
        summary.interrupted = true;
        return true;
      }
      noise = judge_shape_noise(again.measurements, again_before, platform.cores);
    }
    note_noise(summary, p.shape, noise);
    ++summary.tuned;
    progress.finish_shape(
        store.winner({summary.platform_hash, dtype, platform.threads, options.tune.layout, p.shape}));
    return true;
  };
  std::vector<Pending> waiting = std::move(pending);
  for (int sweep = 0; !waiting.empty() && !summary.interrupted; ++sweep) {
    if (sweep > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others are at work
    std::vector<Pending> still;
    for (Pending& p : waiting) {
      if (summary.interrupted || (stop && stop->load())) {
        summary.interrupted = true;
        break;
      }
      if (!tune_claimed(p)) {
        p.measured_elsewhere = true;  // held by another tuner: read the store again when claimed
        still.push_back(std::move(p));
      }
    }
    waiting = std::move(still);
  }
  progress.clear();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace sfc
