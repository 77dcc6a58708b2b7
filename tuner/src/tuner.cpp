#include "sfc/tuner.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include "sfc/error.hpp"
#include "sfc/measure.hpp"
#include "sfc/threads.hpp"

namespace sfc {
namespace {

// The screening of a pruned search: one warm-up, then two timed runs, more
// (up to kScreenReps) while they took less than kScreenSeconds; a
// configuration's screen is the fastest. One run was too few: a run that a
// timer tick or another process lands on reads several times slow on a short
// shape, and a screen that far off prunes the winner for good. Two runs at
// least, because the slow one can spend the budget alone; up to five, because
// a machine's slow spells can cover two runs one round apart
// (docs/experiments/2026-12-02-screen-retune-zen5.md; figures:
// docs/experiments/2026-12-07-figures-from-code-comments.md#screening-runs).
// (The constants are in sfc/tuner.hpp, for the replay of a ranked search.)

// What the stored and new measurements say about each configuration.
struct Knowledge {
  std::uint64_t full = 0;  // has a full measurement
  std::uint64_t any = 0;   // has any measurement
  // Per configuration: the fastest of its screening runs and of its full
  // repetitions; +infinity when it has none.
  std::array<double, kConfigCount> screen_min, full_min;

  explicit Knowledge(std::span<const Measurement> measurements) {
    screen_min.fill(INFINITY);
    full_min.fill(INFINITY);
    for (const Measurement& m : measurements) add(m);
  }

  void add(const Measurement& m) {
    const int i = config_index(m.k_layers, m.k_block_factor);
    const std::uint64_t bit = std::uint64_t{1} << i;
    any |= bit;
    double& fastest = (m.screening ? screen_min : full_min)[i];
    fastest = std::fmin(fastest, m.min_s);
    if (!m.screening) full |= bit;
  }

  // What pruning compares: the screening time, or the full time of a
  // configuration that was never screened; +infinity when unknown.
  double reference(int i) const { return std::isfinite(screen_min[i]) ? screen_min[i] : full_min[i]; }

  // Configurations of `configs` within (1 + margin) of the best reference time.
  std::uint64_t survivors(const ConfigSet& configs, double margin) const {
    double best = INFINITY;
    for (Knobs c : configs.configs()) best = std::fmin(best, reference(c.index()));
    std::uint64_t out = 0;
    for (Knobs c : configs.configs()) {
      const double r = reference(c.index());  // an unmeasured one never survives
      if (std::isfinite(r) && r <= (1 + margin) * best) out |= std::uint64_t{1} << c.index();
    }
    return out;
  }

  // Up to `count` fully measured configurations of `configs`, fastest first,
  // within (1 + margin) of the fastest.
  std::vector<Knobs> leaders(const ConfigSet& configs, int count, double margin) const {
    std::vector<Knobs> out;
    for (Knobs c : configs.configs())
      if ((full >> c.index()) & 1) out.push_back(c);
    std::stable_sort(out.begin(), out.end(),
                     [&](Knobs a, Knobs b) { return full_min[a.index()] < full_min[b.index()]; });
    if (out.empty()) return out;
    const double limit = (1 + margin) * full_min[out.front().index()];
    std::erase_if(out, [&](Knobs c) { return full_min[c.index()] > limit; });
    if (int(out.size()) > count) out.resize(std::size_t(count));
    return out;
  }
};

std::vector<Knobs> select(const ConfigSet& configs, std::uint64_t keep) {
  std::vector<Knobs> out;
  for (Knobs c : configs.configs())
    if ((keep >> c.index()) & 1) out.push_back(c);
  return out;
}

// The search over one shape: the timing passes share the cold operands, the
// knowledge of what is measured, and the output.
class ShapeSearch {
  // One plan's timing and the warm-up runs before it.
  struct Timed {
    Timing timing;
    int warmup;
  };

 public:
  Knowledge known;  // prior and new measurements
  ShapeTuning out;  // what this call returns

  ShapeSearch(const TuneOptions& options, const GemmShape& shape, std::span<const Measurement> prior)
      : known(prior),
        base_{.shape = shape, .dtype = options.dtype, .threads = options.threads, .layout = options.layout},
        // Where the sets rotate instead of being evicted, runs of all
        // configurations rotate over them (ColdOperands keeps no more than
        // the cold footprint of them).
        operand_runs_(kConfigCount * std::max(rounds_runs(kScreenWarmup, kScreenReps, kConfigCount),
                                              rounds_runs(options.warmup, options.reps, kConfigCount))),
        budget_seconds_(options.budget_seconds),
        group_workspace_(options.round_workspace_bytes) {
    out.result.shape = shape;
    out.result.dtype = options.dtype;
    out.result.threads = options.threads;
    out.result.layout = options.layout;
    out.result.k_layers = out.result.k_block_factor = 0;
    out.result.seconds.fill(NAN);
  }

  // Times `configs` with `warmup` + `reps` runs each, in rounds (time_rounds
  // in sfc/measure.hpp says why), and records them in order; false when
  // `stop` ended it (what was recorded before stays).
  // `warm_once` (the race of a ranked search): no warm-up rounds where
  // several plans are timed together, since each visit starts with an untimed
  // settling run, which is what a warm-up run does; a plan timed alone has no
  // settling run and gets one warm-up run (none if `warmup` is 0).
  bool pass(const std::vector<Knobs>& configs, int warmup, int reps, bool screening,
            const std::atomic<bool>* stop, const std::function<void(const TuneStep&)>& on_step,
            bool warm_once = false) {
    const double budget = screening ? kScreenSeconds : budget_seconds_;
    const int min_reps = screening ? kScreenMinReps : 1;
    std::map<Knobs, Timed> timed;  // by effective configuration
    TuneStep step{.screening = screening, .done = 0, .total = static_cast<int>(configs.size())};
    for (std::size_t begin = 0; begin < configs.size();) {
      Group group = plan_group(configs, begin, timed);
      if (!group.plans.empty()) {
        std::vector<GemmPlan*> plans;
        for (const auto& p : group.plans) plans.push_back(p.get());
        // One set of cold operands serves every configuration of the shape.
        if (!operands_)
          operands_ = std::make_unique<ColdOperands>(*plans.front(), base_.layout, operand_runs_);
        const int w = !warm_once ? warmup : plans.size() > 1 ? 0 : std::min(warmup, 1);
        const std::vector<Timing> t = operands_->time(plans, w, reps, budget, stop, min_reps);
        if (t.empty()) return false;
        for (std::size_t i = 0; i < plans.size(); ++i)
          timed.emplace(Knobs{plans[i]->k_layers(), plans[i]->k_block_factor()}, Timed{t[i], w});
      }
      for (const Knobs effective : group.effective) {
        const Timed& run = timed.at(effective);
        record(configs[begin++], effective, run.timing, run.warmup, screening);
        ++step.done;
        if (on_step) {
          step.best_k_layers = out.result.k_layers;
          step.best_k_block_factor = out.result.k_block_factor;
          step.best_seconds = best_seconds_;
          on_step(step);
        }
      }
    }
    return true;
  }

 private:
  // The next configurations from `begin` on: how each runs (effective), and
  // the plans (one per effective configuration not timed yet) that time them
  // together.
  struct Group {
    std::vector<Knobs> effective;
    std::vector<std::unique_ptr<GemmPlan>> plans;
  };

  // The plans of one round hold their scratch (copies of C, packing buffers)
  // at once: a group stops before the plan that would take the group's
  // scratch past TuneOptions::round_workspace_bytes (a group has at least one plan).
  Group plan_group(const std::vector<Knobs>& configs, std::size_t begin,
                   const std::map<Knobs, Timed>& timed) {
    Group g;
    std::size_t workspace = 0;
    for (std::size_t i = begin; i < configs.size(); ++i) {
      PlanRequest request = base_;
      request.k_layers = configs[i].k_layers;
      request.k_block_factor = configs[i].k_block_factor;
      auto plan = std::make_unique<GemmPlan>(request);
      const Knobs effective{plan->k_layers(), plan->k_block_factor()};
      blocks_ = plan->blocks();
      threads_ = plan->threads();
      const bool planned = std::ranges::find(g.effective, effective) != g.effective.end();
      if (!timed.contains(effective) && !planned) {
        if (!g.plans.empty() && workspace + plan->workspace_bytes() > group_workspace_) break;
        workspace += plan->workspace_bytes();
        g.plans.push_back(std::move(plan));
      }
      g.effective.push_back(effective);
    }
    return g;
  }

  // Records the timing `t` of `c` (which ran as `effective`).
  void record(Knobs c, Knobs effective, const Timing& t, int warmup, bool screening) {
    // Timed fully before in this call (a confirmation), not just screened.
    const bool again =
        !screening && ((known.full >> c.index()) & 1) && !std::isnan(out.result.seconds[c.index()]);
    Measurement m{.shape = base_.shape,
                  .dtype = base_.dtype,
                  .threads = threads_,
                  .layout = base_.layout,
                  .k_layers = c.k_layers,
                  .k_block_factor = c.k_block_factor,
                  .effective_k_layers = effective.k_layers,
                  .effective_k_block_factor = effective.k_block_factor,
                  .blocks = blocks_,
                  .warmup = warmup,
                  .reps = t.reps,
                  .mean_s = t.mean,
                  .min_s = t.min,
                  .stddev_s = t.stddev,
                  .screening = screening,
                  .measured_at = utc_timestamp()};
    known.add(m);
    out.result.threads = m.threads;
    // A configuration's time is its fastest cold run (see sfc/tuner.hpp):
    // a full timing replaces a screen, a second full timing adds runs.
    float& seconds = out.result.seconds[c.index()];
    seconds = again ? std::fmin(seconds, static_cast<float>(t.min)) : static_cast<float>(t.min);
    // Strictly faster only: a tie stays with the earlier, smaller configuration.
    if (!screening && (out.result.k_layers == 0 || t.min < best_seconds_)) {
      out.result.k_layers = c.k_layers;
      out.result.k_block_factor = c.k_block_factor;
      best_seconds_ = t.min;
    }
    out.measurements.push_back(std::move(m));
  }

  PlanRequest base_;
  int operand_runs_;
  double budget_seconds_;
  std::size_t group_workspace_;
  std::unique_ptr<ColdOperands> operands_;  // made on the first timing
  double best_seconds_ = 0;
  BlockSizes blocks_{};  // of every plan of the shape (the knobs do not change them)
  int threads_ = 0;
};

}  // namespace

std::string_view to_string(Search search) { return search == Search::ranked ? "ranked" : "exhaustive"; }

Search parse_search(std::string_view text) {
  if (text == "exhaustive") return Search::exhaustive;
  if (text == "ranked") return Search::ranked;
  throw Error("unknown search '" + std::string(text) + "' (exhaustive or ranked)");
}

Tuner::Tuner(const TuneOptions& options) : options_(options) {
  if (options.threads < 0)
    throw Error("threads must be >= 0 (0: all), got " + std::to_string(options.threads));
  if (options.warmup < 0) throw Error("warm-up runs must be >= 0, got " + std::to_string(options.warmup));
  if (options.reps < 1) throw Error("repetitions must be >= 1, got " + std::to_string(options.reps));
  if (std::isnan(options.prune_margin)) throw Error("the pruning margin must be a number");
  if (!(options.budget_seconds >= 0)) throw Error("the time budget must be >= 0 seconds (0: no budget)");
  if (options.search == Search::ranked) check(options.race);
}

bool Tuner::has_work(const ConfigSet& configs, std::span<const Measurement> prior) const {
  const Knowledge known(prior);
  if (options_.search == Search::ranked) return (configs.bits() & known.full) == 0;
  if (options_.prune_margin < 0) return (configs.bits() & ~known.full) != 0;
  if ((configs.bits() & ~known.any) != 0) return true;  // something is still to be screened
  return (known.survivors(configs, options_.prune_margin) & ~known.full) != 0;
}

ShapeTuning Tuner::tune(const GemmShape& shape, const ConfigSet& configs, std::span<const Measurement> prior,
                        const std::atomic<bool>* stop,
                        const std::function<void(const TuneStep&)>& on_step) const {
  if (options_.search == Search::ranked)
    return race(shape, configs.configs(), stop, on_step, nullptr, configs.bits());
  ColdOperands::check_fits(shape, options_.dtype);  // before planning what cannot run
  ShapeSearch search(options_, shape, prior);
  const bool prune = options_.prune_margin >= 0;
  if (prune &&
      !search.pass(select(configs, ~search.known.any), kScreenWarmup, kScreenReps, true, stop, on_step)) {
    search.out.interrupted = true;
    return std::move(search.out);
  }
  const std::uint64_t candidates =
      prune ? search.known.survivors(configs, options_.prune_margin) : configs.bits();
  search.out.interrupted = !search.pass(select(configs, candidates & ~search.known.full), options_.warmup,
                                        options_.reps, false, stop, on_step);
  if (!search.out.interrupted && options_.confirm > 0 && !search.out.measurements.empty()) {
    const std::vector<Knobs> leaders =
        search.known.leaders(configs, options_.confirm, options_.confirm_margin);
    if (leaders.size() > 1)
      search.out.interrupted = !search.pass(leaders, options_.warmup, options_.reps, false, stop, on_step);
  }
  return std::move(search.out);
}

ShapeTuning Tuner::race(const GemmShape& shape, const std::vector<Knobs>& shortlist,
                        const std::atomic<bool>* stop, const std::function<void(const TuneStep&)>& on_step,
                        RaceResult* summary, std::uint64_t allowed) const {
  ColdOperands::check_fits(shape, options_.dtype);
  ShapeSearch search(options_, shape, {});
  // Each timing is one pass of the exhaustive search's machinery: what it
  // records is what the race reads back.
  const RaceTimer timer = [&](const std::vector<Knobs>& configs,
                              bool screening) -> std::optional<std::vector<RaceRuns>> {
    const std::size_t first = search.out.measurements.size();
    const bool warm_once = true;
    const bool done = screening
                          ? search.pass(configs, kScreenWarmup, kScreenReps, true, stop, on_step, warm_once)
                          : search.pass(configs, options_.warmup, options_.race.round_reps, false, stop,
                                        on_step, warm_once);
    if (!done) return std::nullopt;
    std::vector<RaceRuns> runs;
    for (std::size_t i = first; i < search.out.measurements.size(); ++i) {
      const Measurement& m = search.out.measurements[i];
      runs.push_back({.effective = {m.effective_k_layers, m.effective_k_block_factor},
                      .reps = m.reps,
                      .min_s = m.min_s,
                      .mean_s = m.mean_s,
                      .stddev_s = m.stddev_s});
    }
    return runs;
  };
  const RaceResult result =
      sfc::race(shortlist, timer, options_.race, allowed, [&](Knobs c) { return effective(shape, c); });
  search.out.interrupted = result.interrupted;
  if (summary) *summary = result;
  return std::move(search.out);
}

Knobs effective_config(const GemmShape& shape, DType dtype, int threads, Layout layout, Knobs c) {
  // The plan's clamps (core/src/plan.cpp): layers up to the K blocks, rounds
  // up to a layer's share of them.
  const int used = threads > 0 ? usable_threads(threads) : default_threads();
  const GemmShape loop = loop_shape(shape, layout);
  const std::int64_t bk = choose_blocks(loop, dtype, used, layout).bk;
  const std::int64_t kb = (loop.k + bk - 1) / bk;
  const int layers = int(std::min<std::int64_t>(c.k_layers, kb));
  return {layers, int(std::min<std::int64_t>(c.k_block_factor, kb / layers))};
}

Knobs Tuner::effective(const GemmShape& shape, Knobs c) const {
  return effective_config(shape, options_.dtype, options_.threads, options_.layout, c);
}

}  // namespace sfc
