// `sfc-tune tune`: fills a tuning database with measurements, resumable and
// interruptible (SIGINT, SIGTERM). The work happens in sfc_tuner; this file
// maps flags onto it and prints results.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "sfc/calibration.hpp"
#include "sfc/error.hpp"
#include "sfc/measure.hpp"
#include "sfc/platform.hpp"
#include "sfc/shape_grid.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/tuning_session.hpp"
#include "sfc/tuning_source.hpp"
#include "sfc/tuning_store.hpp"
#include "sfc/tuning_table.hpp"
#include "shape_source.hpp"
#include "stop_on_signals.hpp"

namespace sfc::cli {
namespace {

// ---- interruption -------------------------------------------------------

// What the first SIGINT, SIGTERM or SIGHUP prints (stop_on_signals.hpp). The
// tuner stops between measurements; a second signal ends the process at once,
// which the store survives too (docs/reliability.md).
constexpr const char* kStopMessage =
    "\nsfc-tune: interrupted: finishing the current run, then committing "
    "(interrupt again to abort at once; finished shapes are safe either way)\n";

// What every run says at its end: shapes other tuners finished, and whether
// (and how) it was interrupted.
std::string tuned_elsewhere(std::size_t count) {
  return count ? ", " + std::to_string(count) + " tuned meanwhile by another tuner" : "";
}

void warn_if_interrupted(bool interrupted) {
  if (interrupted)
    spdlog::warn(
        "interrupted: every finished shape and the finished measurements of the current one are committed; "
        "run the same command again to measure only what is missing");
}

// The fixed cost of the shapes tuned: what cold timing spent outside the
// GEMM runs (sfc/measure.hpp's TimingCosts), one line, and the same as JSON.
void print_timing_costs(std::FILE* out, const TimingCosts& costs, std::size_t shapes) {
  const double outside = costs.fill_seconds + costs.flush_seconds;
  std::fprintf(out,
               "timing costs: %.2f s filling %lld MiB of cold inputs, %.2f s flushing caches, %.2f s in GEMM "
               "runs; %.3f s a shape outside the runs\n",
               costs.fill_seconds, static_cast<long long>(costs.filled_bytes >> 20), costs.flush_seconds,
               costs.run_seconds, shapes ? outside / double(shapes) : 0.0);
}

json timing_costs_json(const TimingCosts& costs) {
  return {{"fill_seconds", costs.fill_seconds},
          {"filled_bytes", costs.filled_bytes},
          {"flush_seconds", costs.flush_seconds},
          {"run_seconds", costs.run_seconds}};
}

// The noise guard's notes (sfc/noise_guard.hpp): one line per noisy shape
// and a warning when the machine was busy.
void warn_if_noisy(const SessionSummary& s) {
  if (s.retimed) spdlog::info("{} shape(s) timed again: their runs spread beyond the noise limit", s.retimed);
  for (const std::string& shape : s.noisy_shapes)
    spdlog::warn("noisy timing (after timing again): {}", shape);
  if (s.busy)
    spdlog::warn(
        "the machine was busy while tuning (load average {:.1f} above its cores): the stored winners may be "
        "noise; tune again on an idle machine (--force)",
        s.peak_load);
}

// 128 + the signal, as a shell reports a process it ended (130 for Ctrl-C).
void exit_if_interrupted(bool interrupted) {
  if (interrupted) throw CLI::RuntimeError(interrupted_exit_code());
}

// ---- tune ---------------------------------------------------------------

struct TuneArgs {
  ShapeSource source;
  std::string db = kDefaultDb, dtype = "f32", layout = "blocked";
  std::string k_layers = "1:8", k_block_factors = "1:8", shard;
  int threads = 0, warmup = 2, reps = 10, confirm = 0;
  double prune_margin = 0.25, budget = 0, confirm_margin = 0.10;
  bool prune = false, force = false, quiet = false, json = false;
  bool dtype_given = false, layout_given = false;  // with --from-record: filters, not defaults
  std::string search = "exhaustive", prior;
  RaceOptions race;
  RankingOptions ranking;
};

SessionOptions session_options(const TuneArgs& a, DType dtype, Layout layout) {
  return {.tune = {.dtype = dtype,
                   .threads = 0,
                   .warmup = a.warmup,
                   .reps = a.reps,
                   .prune_margin = a.prune ? a.prune_margin : -1,
                   .layout = layout,
                   .budget_seconds = a.budget,
                   .confirm = a.confirm,
                   .confirm_margin = a.confirm_margin},
          .configs = ConfigSet::parse(a.k_layers, a.k_block_factors),
          .force = a.force,
          .progress = a.quiet ? ProgressStyle::quiet : ProgressStyle::automatic};
}

// A ranked search's setup: the search, its thresholds, the model from the
// database's calibration of this platform (measured now, and stored, when it
// has none) and the --prior table's shapes of this selection.
void prepare_ranked(SessionOptions& options, const TuneArgs& a, TuningStore& store, const Platform& platform,
                    std::FILE* out) {
  options.tune.search = parse_search(a.search);
  if (options.tune.search != Search::ranked) return;
  options.tune.race = a.race;
  options.ranking = a.ranking;
  store.upsert_platform(platform);
  Calibration calibration = store.calibration(platform.hash());
  if (calibration.gamma_gflops_per_core <= 0 || calibration.beta_gbytes_per_s <= 0) {
    std::fprintf(out,
                 "%s has no calibration of this platform (%d threads): calibrating first, a few seconds\n",
                 a.db.c_str(), platform.threads);
    calibration = calibrate(platform.threads);
    store.save_calibration(platform.hash(), calibration);
  }
  options.model.emplace(calibration, platform.l2_bytes);
  options.prior.clear();
  if (a.prior.empty()) return;
  for (const TuningTable& t : load_tuning_tables(a.prior, PlatformChoice::parse("any")))
    for (const TunedShape& s : t.shapes)
      if (s.dtype == options.tune.dtype && s.threads == platform.threads && s.layout == options.tune.layout)
        options.prior.push_back(s);
}

// The ranked search's spending, one line per run (nothing for an exhaustive one).
void print_ranked(std::FILE* out, const TuneArgs& a, const SessionSummary& s) {
  if (a.search != "ranked" || s.tuned == 0) return;
  const double shapes = double(s.tuned);
  std::fprintf(out, "ranked search: per shape %.1f configurations screened, %.1f timed fully, %.1f runs\n",
               double(s.screened) / shapes, double(s.fully_timed) / shapes, double(s.runs) / shapes);
}

// The calibration the record's ranking uses: the database's own, when it has
// one for this machine (a new or foreign database has none: the nominal one).
std::vector<TuningTable> calibration_tables(const std::string& db) {
  std::error_code error;
  if (!std::filesystem::exists(db, error)) return {};
  try {
    return load_tuning_tables(db);
  } catch (const SourceError&) {
    return {};
  }
}

// tune --from-record: the record's shapes, largest share first, as runs of
// tune_grid, one per stretch of equal (dtype, threads, layout) in that order,
// so the global order holds and each run resumes, shows progress and can be
// interrupted as a grid's does.
void run_tune_from_record(const TuneArgs& a) {
  std::FILE* const out = human_output(a.json);
  std::vector<TuningTarget> targets = a.source.record_targets(calibration_tables(a.db));
  std::erase_if(targets, [&](const TuningTarget& t) {
    return (a.dtype_given && t.dtype != parse_dtype(a.dtype)) ||
           (a.layout_given && t.layout != parse_layout(a.layout)) ||
           (a.threads > 0 && t.threads != a.threads);
  });
  if (!a.shard.empty()) {
    const Shard shard = Shard::parse(a.shard);
    std::vector<TuningTarget> mine;
    for (std::size_t i = std::size_t(shard.index); i < targets.size(); i += std::size_t(shard.count))
      mine.push_back(targets[i]);
    targets = std::move(mine);
  }

  SessionSummary total;
  json groups = json::array(), shapes = json::array();
  const TimingCosts costs_before = timing_costs();
  {
    // From before the database is opened, as for a grid (run_tune).
    const StopOnSignals stop_on_signals(kStopMessage);
    TuningStore store(a.db, TuningStore::Mode::create);
    for (std::size_t begin = 0; begin < targets.size() && !total.interrupted;) {
      const TuningTarget& first = targets[begin];
      std::size_t end = begin;
      std::vector<GemmShape> run;
      for (; end < targets.size() && targets[end].dtype == first.dtype &&
             targets[end].threads == first.threads && targets[end].layout == first.layout;
           ++end)
        run.push_back(targets[end].shape);
      SessionOptions options = session_options(a, first.dtype, first.layout);
      const Platform platform = detect_platform(first.threads);
      options.tune.threads = platform.threads;
      prepare_ranked(options, a, store, platform, out);
      const SessionSummary summary = tune_grid(store, platform, ShapeGrid(run), options, stop_requested());
      print_ranked(out, a, summary);
      std::fprintf(out, "%s, %d threads, %s layout: %zu of %zu shapes tuned now, %zu were already done\n",
                   std::string(to_string(first.dtype)).c_str(), platform.threads,
                   std::string(to_string(first.layout)).c_str(), summary.tuned, summary.shapes,
                   summary.already_done);
      groups.push_back({{"dtype", to_string(first.dtype)},
                        {"threads", platform.threads},
                        {"layout", to_string(first.layout)},
                        {"platform", summary.platform_hash},
                        {"shapes", summary.shapes},
                        {"already_done", summary.already_done},
                        {"tuned", summary.tuned},
                        {"tuned_elsewhere", summary.tuned_elsewhere}});
      total.shapes += summary.shapes;
      total.already_done += summary.already_done;
      total.tuned += summary.tuned;
      total.tuned_elsewhere += summary.tuned_elsewhere;
      total.measurements += summary.measurements;
      total.seconds += summary.seconds;
      total.interrupted = summary.interrupted;
      total.retimed += summary.retimed;
      total.noisy_shapes.insert(total.noisy_shapes.end(), summary.noisy_shapes.begin(),
                                summary.noisy_shapes.end());
      total.busy = total.busy || summary.busy;
      total.peak_load = std::max(total.peak_load, summary.peak_load);
      begin = end;
    }
  }
  for (const TuningTarget& t : targets)
    shapes.push_back({{"shape", to_string(t.shape)},
                      {"dtype", to_string(t.dtype)},
                      {"threads", t.threads},
                      {"layout", to_string(t.layout)},
                      {"calls", t.calls},
                      {"share", t.share},
                      {"tier", to_string(t.tier)}});

  std::fprintf(
      out,
      "%s: %zu of %zu recorded shapes tuned now, %zu were already done%s; %lld measurements added in "
      "%.1f s (from %s)\n",
      a.db.c_str(), total.tuned, total.shapes, total.already_done,
      tuned_elsewhere(total.tuned_elsewhere).c_str(), static_cast<long long>(total.measurements),
      total.seconds, a.source.record_file.c_str());
  const TimingCosts costs = timing_costs() - costs_before;
  print_timing_costs(out, costs, total.tuned);
  warn_if_noisy(total);
  warn_if_interrupted(total.interrupted);
  if (a.json)
    print_json({{"command", "tune"},
                {"db", a.db},
                {"from_record", a.source.record_file},
                {"shard", a.shard.empty() ? Shard{}.to_string() : Shard::parse(a.shard).to_string()},
                {"shapes", total.shapes},
                {"already_done", total.already_done},
                {"tuned", total.tuned},
                {"tuned_elsewhere", total.tuned_elsewhere},
                {"measurements", total.measurements},
                {"interrupted", total.interrupted},
                {"seconds", total.seconds},
                {"timing_costs", timing_costs_json(costs)},
                {"retimed", total.retimed},
                {"noisy_shapes", total.noisy_shapes},
                {"busy", total.busy},
                {"groups", groups},
                {"targets", shapes}});
  exit_if_interrupted(total.interrupted);
}

void run_tune(const TuneArgs& a) {
  if (a.source.from_record()) return run_tune_from_record(a);
  std::FILE* const out = human_output(a.json);
  ShapeGrid grid = a.source.shapes();
  const Shard shard = a.shard.empty() ? Shard{} : Shard::parse(a.shard);
  grid = grid.shard(shard);
  SessionOptions options = session_options(a, parse_dtype(a.dtype), parse_layout(a.layout));
  const Platform platform = detect_platform(a.threads);
  options.tune.threads = platform.threads;

  SessionSummary summary;
  const TimingCosts costs_before = timing_costs();
  {
    // From before the database is opened (created, migrated): a signal then
    // stops the run before its first shape, like any other.
    const StopOnSignals stop_on_signals(kStopMessage);
    TuningStore store(a.db, TuningStore::Mode::create);
    prepare_ranked(options, a, store, platform, out);
    summary = tune_grid(store, platform, grid, options, stop_requested());
  }

  std::fprintf(out,
               "%s: %zu of %zu shapes tuned now, %zu were already done%s; %lld measurements added in %.1f s "
               "(platform %s, %s, %d threads, %s layout%s)\n",
               a.db.c_str(), summary.tuned, summary.shapes, summary.already_done,
               tuned_elsewhere(summary.tuned_elsewhere).c_str(), static_cast<long long>(summary.measurements),
               summary.seconds, summary.platform_hash.c_str(), a.dtype.c_str(), platform.threads,
               a.layout.c_str(), a.shard.empty() ? "" : (", shard " + shard.to_string()).c_str());
  const TimingCosts costs = timing_costs() - costs_before;
  print_timing_costs(out, costs, summary.tuned);
  print_ranked(out, a, summary);
  warn_if_noisy(summary);
  warn_if_interrupted(summary.interrupted);
  if (a.json)
    print_json({{"command", "tune"},
                {"db", a.db},
                {"search", a.search},
                {"screened", summary.screened},
                {"fully_timed", summary.fully_timed},
                {"runs", summary.runs},
                {"platform", summary.platform_hash},
                {"dtype", a.dtype},
                {"threads", platform.threads},
                {"layout", a.layout},
                {"shard", shard.to_string()},
                {"shapes", summary.shapes},
                {"already_done", summary.already_done},
                {"tuned", summary.tuned},
                {"tuned_elsewhere", summary.tuned_elsewhere},
                {"measurements", summary.measurements},
                {"interrupted", summary.interrupted},
                {"seconds", summary.seconds},
                {"timing_costs", timing_costs_json(costs)},
                {"retimed", summary.retimed},
                {"noisy_shapes", summary.noisy_shapes},
                {"busy", summary.busy}});
  exit_if_interrupted(summary.interrupted);
}

}  // namespace

void add_ranked_search_options(CLI::App& cmd, RankingOptions& ranking, RaceOptions& race,
                               const std::string& when) {
  cmd.add_option("--min-shortlist", ranking.min_shortlist,
                 when + ": configurations screened when the ranking is sure")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd.add_option("--max-shortlist", ranking.max_shortlist, when + ": configurations screened when it is not")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd.add_option("--climb", race.climb, when + ": times the screen leader's grid neighbours are screened too")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd.add_option("--screen-drop", race.screen_drop,
                 when + ": configurations screened beyond (1 + this) x the best screen drop out")
      ->check(real_range(0.0, 100.0))
      ->capture_default_str();
  cmd.add_option("--round-reps", race.round_reps, when + ": timed runs per race round")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--max-rounds", race.max_rounds, when + ": race rounds at most")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--noise-multiple", race.noise_multiple,
                 when + ": the leader wins once ahead by this many units of the shape's measured noise")
      ->check(real_range(0.0, 100.0))
      ->capture_default_str();
  cmd.add_option("--min-gap", race.min_gap, when + ": ... and by at least this fraction")
      ->check(real_range(0.0, 10.0))
      ->capture_default_str();
}

void add_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Time every (K_layers, k_block_factor) of every shape of a grid and store all measurements");
  a->source.add_options(cmd);
  cmd->add_option("--db", a->db, "Tuning database (created if absent)")->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "Element type: f32, f64 or bf16 (with --from-record: only that one)")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads,
                  "OpenMP threads (default: OMP_NUM_THREADS or all cores; with --from-record: the record's, "
                  "or only this count)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--warmup", a->warmup, "Untimed runs before the timed ones (a ranked race: one at most)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--layout", a->layout,
                  "Entry to time: blocked (execute() on the native layout) or row/col (gemm() on plain "
                  "matrices, packing included); each has its own winners (with --from-record: the "
                  "record's, or only this one)")
      ->check(CLI::IsMember({"blocked", "row", "col"}))
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "Timed runs per configuration (their fastest is its time)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--budget", a->budget,
                  "Seconds per configuration: its warm-up and its timed runs each stop once they took this "
                  "long (at least one timed run), so large shapes cost a few runs; 0: always --reps")
      ->check(real_range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--confirm", a->confirm,
                  "Time the N fastest configurations within --confirm-margin of the best again, together, "
                  "and keep the fastest run of both timings (0: off)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd->add_option("--confirm-margin", a->confirm_margin,
                  "Fraction above the best full timing that still gets confirmed")
      ->check(real_range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--k-layers", a->k_layers, "K_layers values to search, e.g. 1:8 or 1,2,4")
      ->capture_default_str();
  cmd->add_option("--k-block-factors", a->k_block_factors, "k_block_factor values to search")
      ->capture_default_str();
  CLI::Option* prune = cmd->add_flag("--prune", a->prune,
                                     "Screen every configuration briefly (2 to 5 runs), then "
                                     "time fully only those within --prune-margin of the best screen");
  cmd->add_option("--prune-margin", a->prune_margin,
                  "Fraction above the best screen that still gets timed fully")
      ->check(real_range(0.0, 100.0))
      ->capture_default_str()
      ->needs(prune);
  cmd->add_option("--search", a->search,
                  "exhaustive: time every configuration; ranked: rank them (model, tuned neighbours, "
                  "--prior), time a short list and race it (docs/tuning.md)")
      ->check(CLI::IsMember({"exhaustive", "ranked"}))
      ->capture_default_str();
  cmd->add_option("--prior", a->prior,
                  "With --search ranked: a database or table (any machine's) whose tuned shapes rank too");
  add_ranked_search_options(*cmd, a->ranking, a->race, "With --search ranked");
  cmd->add_flag("--force", a->force, "Measure shapes again even if the database already has them");
  cmd->add_option("--shard", a->shard,
                  "I/N: tune only every N-th shape of the grid, starting at shape I (0-based)");
  cmd->add_flag("--quiet", a->quiet, "No progress output");
  cmd->add_flag("--json", a->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  cmd->callback([a, cmd] {
    if (a->search != "ranked" && !a->prior.empty())
      throw Error("--prior ranks shapes: it needs --search ranked");
    if (a->search == "ranked" && a->prune)
      throw Error("--prune and --search ranked are two searches: pick one");
    if (a->ranking.min_shortlist > a->ranking.max_shortlist)
      throw Error("--min-shortlist must not exceed --max-shortlist");
    a->dtype_given = cmd->count("--dtype") > 0;
    a->layout_given = cmd->count("--layout") > 0;
    run_tune(*a);
  });
}

}  // namespace sfc::cli
