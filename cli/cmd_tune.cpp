// The store commands: `tune` fills a tuning database; `export`, `import`,
// `merge` and `db info` move and show what it holds. The work happens in
// sfc_tuner and sfc_db; this file maps flags onto it and prints results.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/shape_grid.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/tuning_session.hpp"
#include "sfc/tuning_store.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc::cli {
namespace {

using json = nlohmann::ordered_json;  // keys print in the order written

constexpr const char* kDefaultDb = "sfc-tune.db";
constexpr int kInterruptedExit = 130;  // the shell's code for "ended by SIGINT"

// ---- interruption -------------------------------------------------------

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void request_stop(int) {
  g_stop.store(true);
  static const char message[] =
      "\nsfc-tune: interrupted: finishing the current measurement, then committing "
      "(interrupt again to abort at once; finished shapes are safe either way)\n";
  [[maybe_unused]] const ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
}

// SIGINT (Ctrl-C) and SIGTERM (Slurm's time limit) ask the tuner to stop
// between measurements. SA_RESETHAND puts the default back, so a second
// signal ends the process at once, which the store survives too.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop.store(false);
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

void print_json(const json& summary) { std::printf("%s\n", summary.dump().c_str()); }

// ---- tune ---------------------------------------------------------------

struct TuneArgs {
  std::string grid, shapes_file, range = "128:8192", db = kDefaultDb, dtype = "f32", layout = "blocked";
  std::string k_layers = "1:8", k_block_factors = "1:8", shard;
  int random = 0, threads = 0, warmup = 2, reps = 10;
  std::uint64_t seed = 1;
  double prune_margin = 0.25, budget = 0;
  bool prune = false, force = false, quiet = false, json = false;
};

ShapeGrid grid_of(const TuneArgs& a) {
  const int sources = !a.grid.empty() + !a.shapes_file.empty() + (a.random > 0);
  if (sources != 1) throw Error("give exactly one of --grid SPEC, --shapes FILE or --random COUNT");
  if (!a.grid.empty()) return ShapeGrid::parse(a.grid);
  if (!a.shapes_file.empty()) return ShapeGrid::load(a.shapes_file);
  const auto [lo, hi] = parse_dimension_range(a.range);
  return ShapeGrid::random(a.random, lo, hi, a.seed);
}

void run_tune(const TuneArgs& a) {
  std::FILE* const out = human_output(a.json);
  ShapeGrid grid = grid_of(a);
  const Shard shard = a.shard.empty() ? Shard{} : Shard::parse(a.shard);
  grid = grid.shard(shard);
  SessionOptions options{.tune = {.dtype = parse_dtype(a.dtype),
                                  .threads = 0,
                                  .warmup = a.warmup,
                                  .reps = a.reps,
                                  .prune_margin = a.prune ? a.prune_margin : -1,
                                  .layout = parse_layout(a.layout),
                                  .budget_seconds = a.budget},
                         .configs = ConfigSet::parse(a.k_layers, a.k_block_factors),
                         .force = a.force,
                         .progress = a.quiet ? ProgressStyle::quiet : ProgressStyle::automatic};
  const Platform platform = detect_platform(a.threads);
  options.tune.threads = platform.threads;

  TuningStore store(a.db, TuningStore::Mode::create);
  SessionSummary summary;
  {
    StopOnSignals stop_on_signals;
    summary = tune_grid(store, platform, grid, options, &g_stop);
  }

  std::fprintf(out,
               "%s: %zu of %zu shapes tuned now, %zu were already done; %lld measurements added in %.1f s "
               "(platform %s, %s, %d threads, %s layout%s)\n",
               a.db.c_str(), summary.tuned, summary.shapes, summary.already_done,
               static_cast<long long>(summary.measurements), summary.seconds, summary.platform_hash.c_str(),
               a.dtype.c_str(), platform.threads, a.layout.c_str(),
               a.shard.empty() ? "" : (", shard " + shard.to_string()).c_str());
  if (summary.interrupted)
    spdlog::warn(
        "interrupted: every finished shape and the measurements of the current one are committed; "
        "run the same command again to measure only what is missing");
  if (a.json)
    print_json({{"command", "tune"},
                {"db", a.db},
                {"platform", summary.platform_hash},
                {"dtype", a.dtype},
                {"threads", platform.threads},
                {"layout", a.layout},
                {"shard", shard.to_string()},
                {"shapes", summary.shapes},
                {"already_done", summary.already_done},
                {"tuned", summary.tuned},
                {"measurements", summary.measurements},
                {"interrupted", summary.interrupted},
                {"seconds", summary.seconds}});
  if (summary.interrupted) throw CLI::RuntimeError(kInterruptedExit);
}

void add_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Time every (K_layers, k_block_factor) of every shape of a grid and store all measurements");
  cmd->add_option("--grid", a->grid,
                  "Shapes: \"256,512,1024\" (cubed) or \"m=512:8192:x2 n=128,256 k=1024\"");
  cmd->add_option("--shapes", a->shapes_file,
                  "Shapes from a file of \"M N K\" lines (# comments), e.g. data/grids/small.shapes");
  cmd->add_option("--random", a->random, "COUNT random shapes, log-uniform over --range")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--range", a->range, "LO:HI of every dimension for --random")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed for --random (the same seed gives the same shapes everywhere)")
      ->capture_default_str();
  cmd->add_option("--db", a->db, "Tuning database (created if absent)")->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "Element type: f32, f64 or bf16")->capture_default_str();
  cmd->add_option("--threads", a->threads, "OpenMP threads (default: OMP_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--warmup", a->warmup, "Untimed runs before the timed ones")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--layout", a->layout,
                  "Entry to time: blocked (execute() on the native layout) or row/col (gemm() on plain "
                  "matrices, packing included); each has its own winners")
      ->check(CLI::IsMember({"blocked", "row", "col"}))
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "Timed runs per configuration (their fastest is its time)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--budget", a->budget,
                  "Seconds per configuration: its warm-up and its timed runs each stop once they took this "
                  "long (at least one timed run), so large shapes cost a few runs; 0: always --reps")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--k-layers", a->k_layers, "K_layers values to search, e.g. 1:8 or 1,2,4")
      ->capture_default_str();
  cmd->add_option("--k-block-factors", a->k_block_factors, "k_block_factor values to search")
      ->capture_default_str();
  CLI::Option* prune = cmd->add_flag("--prune", a->prune,
                                     "Screen every configuration with one run, then time "
                                     "fully only those within --prune-margin of the best screen");
  cmd->add_option("--prune-margin", a->prune_margin,
                  "Fraction above the best screen that still gets timed fully")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str()
      ->needs(prune);
  cmd->add_flag("--force", a->force, "Measure shapes again even if the database already has them");
  cmd->add_option("--shard", a->shard,
                  "I/N: tune only every N-th shape of the grid, starting at shape I (0-based)");
  cmd->add_flag("--quiet", a->quiet, "No progress output");
  cmd->add_flag("--json", a->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  cmd->callback([a] { run_tune(*a); });
}

// ---- export / import / merge ---------------------------------------------

// True when `path` is an exported tuning table (a regular file starting
// "sfc-table N"), not a database: export and db info read either.
bool is_table_file(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored) || has_sqlite_header(path)) return false;
  char head[10] = {};
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return false;
  const std::size_t read = std::fread(head, 1, sizeof head, file);
  std::fclose(file);
  return std::string_view(head, read) == "sfc-table ";
}

struct ExportArgs {
  std::string db = kDefaultDb, format = "csv", output, platform;
  bool all = false, json = false;
};

// A tuning table read and written again: how a table of an older version
// (or an older platform hash) becomes a current one.
ExchangeCounts rewrite_table(const ExportArgs& a, const ExportRequest& request) {
  if (request.format != ExportFormat::table)
    throw Error(a.db +
                " is a tuning table, which holds winners only: it can be written again as a table "
                "(--format table); csv and json exports come from a database");
  const TuningTable table = TuningTable::load(a.db);
  if (!a.platform.empty() && a.platform != table.platform.hash())
    throw Error(a.db + " holds platform " + table.platform.hash() + ", not " + a.platform);
  table.save(request.path);
  return {.platforms = 1, .winners = static_cast<std::int64_t>(table.shapes.size())};
}

void run_export(const ExportArgs& a) {
  if (a.output == "-" && a.json)
    throw Error(
        "export: -o - writes the export to stdout, which --json needs for its summary; use one of them");
  std::FILE* const out = human_output(a.json || a.output == "-");  // stdout holds the export itself
  const ExportRequest request{
      .format = parse_export_format(a.format), .path = a.output, .platform_hash = a.platform, .all = a.all};
  std::error_code error;
  const bool table = is_table_file(a.db);
  if (!table && std::filesystem::exists(a.output, error) &&
      std::filesystem::equivalent(a.db, a.output, error))
    throw Error("export: the output " + a.output + " is the database " + a.db +
                " itself; choose another file");
  ExchangeCounts counts;
  if (table) {
    counts = rewrite_table(a, request);
  } else {
    const TuningStore store(a.db, TuningStore::Mode::read_only);
    counts = export_results(store, request);
  }
  std::fprintf(out, "%s: %lld winners%s of %lld platform(s) written as %s\n", a.output.c_str(),
               static_cast<long long>(counts.winners),
               a.all ? (" and " + std::to_string(counts.measurements) + " measurements").c_str() : "",
               static_cast<long long>(counts.platforms), a.format.c_str());
  if (a.json)
    print_json({{"command", "export"},
                {"db", a.db},
                {"output", a.output},
                {"format", a.format},
                {"platforms", counts.platforms},
                {"winners", counts.winners},
                {"measurements", counts.measurements}});
}

struct ImportArgs {
  std::string file, db = kDefaultDb;
  bool json = false;
};

void run_import(const ImportArgs& a) {
  std::FILE* const out = human_output(a.json);
  check_import(a.file);  // a bad file neither creates nor migrates the database
  TuningStore store(a.db, TuningStore::Mode::create);
  const ExchangeCounts counts = import_results(store, a.file);
  std::fprintf(out, "%s: %lld measurements of %lld platform(s) added from %s (%lld already present)\n",
               a.db.c_str(), static_cast<long long>(counts.measurements),
               static_cast<long long>(counts.platforms), a.file.c_str(),
               static_cast<long long>(counts.duplicates));
  if (a.json)
    print_json({{"command", "import"},
                {"db", a.db},
                {"file", a.file},
                {"platforms", counts.platforms},
                {"measurements", counts.measurements},
                {"duplicates", counts.duplicates}});
}

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool json = false;
};

void run_merge(const MergeArgs& a) {
  std::FILE* const out = human_output(a.json);
  namespace fs = std::filesystem;
  std::error_code error;
  for (const std::string& input : a.inputs)
    if (fs::exists(a.output, error) && fs::equivalent(input, a.output, error))
      throw Error("merge: the output " + a.output + " is also an input");
  // Open (and so check) every input before the output is created or touched.
  std::vector<TuningStore> inputs;
  for (const std::string& input : a.inputs) inputs.emplace_back(input, TuningStore::Mode::read_only);
  TuningStore output(a.output, TuningStore::Mode::create);
  ExchangeCounts total;
  for (const TuningStore& input : inputs) {
    const ExchangeCounts counts = merge_results(output, input);
    total.measurements += counts.measurements;
    total.duplicates += counts.duplicates;
  }
  total.platforms = static_cast<std::int64_t>(output.platforms().size());
  std::fprintf(out,
               "%s: %lld measurements merged from %zu database(s) (%lld already present); %lld platform(s)\n",
               a.output.c_str(), static_cast<long long>(total.measurements), a.inputs.size(),
               static_cast<long long>(total.duplicates), static_cast<long long>(total.platforms));
  if (a.json)
    print_json({{"command", "merge"},
                {"output", a.output},
                {"inputs", a.inputs},
                {"platforms", total.platforms},
                {"measurements", total.measurements},
                {"duplicates", total.duplicates}});
}

// ---- db info ---------------------------------------------------------------

struct InfoArgs {
  std::string db = kDefaultDb;
  bool json = false;
};

// A size in bytes as KiB, or "unknown" for a record made before hwloc.
std::string kib(const json& platform, const char* key) {
  const long long bytes = platform[key].get<long long>();
  if (bytes == 0 && platform["numa_nodes"].get<long long>() == 0) return "unknown";
  return std::to_string(bytes / 1024) + " KiB";
}

void run_info(const InfoArgs& a) {
  std::FILE* const out = human_output(a.json);
  // A database, or an exported tuning table (what a fleet is deployed with);
  // anything else is opened as a database, whose refusal says what it is.
  std::error_code error;
  if (!std::filesystem::exists(a.db, error)) throw Error("no tuning database or table at " + a.db);
  const bool database = !is_table_file(a.db);
  json info;
  std::vector<Platform> platforms;
  if (database) {
    const TuningStore store(a.db, TuningStore::Mode::read_only);
    info = describe_store(store);
    std::fprintf(out, "%s: tuning database, schema version %d, %zu platform(s)\n", a.db.c_str(),
                 info["schema_version"].get<int>(), info["platforms"].size());
    platforms = store.platforms();
  } else {
    const TuningTable table = TuningTable::load(a.db);
    info = describe_table(table, a.db);
    std::fprintf(out, "%s: tuning table of %zu shapes\n", a.db.c_str(), table.shapes.size());
    platforms = {table.platform};
  }
  const Platform here = detect_platform();
  std::size_t i = 0;
  for (json& p : info["platforms"]) {
    const int numa = p["numa_nodes"].get<int>();
    std::fprintf(out,
                 "platform %s: %s, %d cores, %d threads, L1d %s, L2 %s, L3 %s, NUMA nodes %s, isa %s, "
                 "LIBXSMM %s, %s\n",
                 p["hash"].get<std::string>().c_str(), p["cpu_model"].get<std::string>().c_str(),
                 p["cores"].get<int>(), p["threads"].get<int>(), kib(p, "l1d_bytes").c_str(),
                 kib(p, "l2_bytes").c_str(), kib(p, "l3_bytes").c_str(),
                 numa > 0 ? std::to_string(numa).c_str() : "unknown", p["isa"].get<std::string>().c_str(),
                 p["libxsmm_version"].get<std::string>().c_str(), p["compiler"].get<std::string>().c_str());
    const PlatformComparison match = compare_platforms(platforms.at(i++), here);
    std::fprintf(out, "  on this machine: %s%s%s\n", std::string(to_string(match.match)).c_str(),
                 match.differences.empty() ? "" : " -- ", match.describe().c_str());
    p["match"] = {{"platform", std::string(to_string(match.match))}, {"differences", match.differences}};
    if (const json& c = p["calibration"]; !c.is_null())
      std::fprintf(
          out, "  calibration: gamma %.1f GFLOP/s per core, beta %.1f GB/s%s\n",
          c["gamma_gflops_per_core"].get<double>(), c["beta_gbytes_per_s"].get<double>(),
          c["measured_at"].is_null() ? "" : (" (" + c["measured_at"].get<std::string>() + ")").c_str());
    for (const json& r : p["results"]) {
      std::fprintf(out, "  %s, %d threads, %s layout: %lld shapes (%lld with a winner)",
                   r["dtype"].get<std::string>().c_str(), r["threads"].get<int>(),
                   r["layout"].get<std::string>().c_str(), r["shapes"].get<long long>(),
                   r["tuned_shapes"].get<long long>());
      if (!r["measurements"].is_null())
        std::fprintf(out, ", %lld measurements", r["measurements"].get<long long>());
      std::fprintf(out, "\n");
    }
  }
  if (a.json) {
    json summary = info;
    summary["command"] = "db info";
    print_json(summary);
  }
}

void add_exchange_commands(CLI::App& app) {
  auto e = std::make_shared<ExportArgs>();
  CLI::App* exp =
      app.add_subcommand("export", "Write the winners (and with --all every measurement) to a file");
  exp->add_option("--db", e->db, "Tuning database, or a tuning table to write again as a current one")
      ->capture_default_str();
  exp->add_option("--format", e->format, "csv, json, or table (the file libsfcconf loads)")
      ->capture_default_str();
  exp->add_option("-o,--output", e->output, "Output file (written atomically), or - for stdout")->required();
  exp->add_option("--platform", e->platform, "Only this platform hash (sfc-tune db info lists them)");
  exp->add_flag("--all", e->all, "Every measurement too (csv/json); such a file imports back without loss");
  exp->add_flag("--json", e->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  exp->callback([e] { run_export(*e); });

  auto i = std::make_shared<ImportArgs>();
  CLI::App* imp = app.add_subcommand("import", "Read a csv or json export made with --all into a database");
  imp->add_option("FILE", i->file, "The export to read")->required();
  imp->add_option("--db", i->db, "Tuning database (created if absent)")->capture_default_str();
  imp->add_flag("--json", i->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  imp->callback([i] { run_import(*i); });

  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge = app.add_subcommand(
      "merge", "Join databases (runs, shards, machines): every measurement is kept, winners are recomputed");
  merge->add_option("INPUTS", m->inputs, "Databases to merge")->required();
  merge->add_option("-o,--output", m->output, "Database to merge into (created if absent)")->required();
  merge->add_flag("--json", m->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  merge->callback([m] { run_merge(*m); });

  CLI::App* db = app.add_subcommand("db", "Inspect a tuning database");
  db->require_subcommand(1);
  auto n = std::make_shared<InfoArgs>();
  CLI::App* info = db->add_subcommand(
      "info", "List platforms (and how each matches this machine), dtypes, thread counts and shape counts");
  info->add_option("--db", n->db, "Tuning database or exported tuning table")->capture_default_str();
  info->add_flag("--json", n->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  info->callback([n] { run_info(*n); });
}

}  // namespace

void add_store_commands(CLI::App& app) {
  add_tune_command(app);
  add_exchange_commands(app);
}

}  // namespace sfc::cli
