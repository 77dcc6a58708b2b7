// `sfc-tune bench`: SFC-CA GEMM against OpenBLAS, BLIS and oneDNN over a grid
// of shapes; prints a table (and optionally CSV, an SVG plot, JSON).
#include <omp.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>  // getpriority
#include <unistd.h>        // environ

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "sfc/analytical_model.hpp"
#include "sfc/bench.hpp"
#include "sfc/bench_prepare.hpp"
#include "sfc/bench_report.hpp"
#include "sfc/bench_summary.hpp"
#include "sfc/gemm.hpp"
#include "sfc/platform.hpp"
#include "sfc/predictor.hpp"
#include "sfc/shape_grid.hpp"
#include "sfc/text_file.hpp"
#include "sfc/tuning_source.hpp"
#include "sfc/tuning_store.hpp"
#include "shape_source.hpp"
#include "stop_on_signals.hpp"

namespace sfc::cli {
namespace {

struct BenchArguments {
  ShapeSource source;
  std::string dtype = "f32", config = "best", db, platform, vs = "openblas,blis,onednn";
  std::string layout = "blocked", csv, plot, statistic = "min";
  std::vector<std::string> trans = {"NN"};  // the first call is SFC-CA's; the others are variants
  std::vector<double> beta = {0};
  double alpha = 1;
  int threads = 0, reps = 10, warmup = 2, passes = 1;
  double min_seconds = 0;
  bool json = false, count_every_peer = false;
};

// The command line exactly as the shell passed it (from /proc), each argument
// quoted when the shell would need it, so the report can be reproduced.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text, argument;
  while (std::getline(in, argument, '\0')) {
    const bool plain = !argument.empty() && argument.find_first_not_of(
                                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789_-+=.,/:@%") == std::string::npos;
    std::string quoted = "'";
    for (char ch : argument) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    text += (text.empty() ? "" : " ") + (plain ? argument : quoted + "'");
  }
  return text.empty() ? "sfc-tune bench" : text;
}

// The --config value, checked before anything is measured.
struct ConfigChoice {
  std::string source;  // "tuned", "nn", "policy", "model", "default", "best" or "explicit"
  Knobs knobs;         // for "explicit"
};

ConfigChoice parse_config_choice(const std::string& text, const std::string& db) {
  if (text == "tuned" || text == "nn" || text == "policy") {
    if (db.empty()) throw Error("--config " + text + " reads the tuning database: give it with --db");
    return {text, {}};
  }
  if (text == "model" || text == "default" || text == "best") return {text, {}};
  const auto comma = text.find(',');
  if (comma == std::string::npos)
    throw Error("--config " + text +
                ": expected tuned, nn, policy, model, default, best or K_LAYERS,K_BLOCK_FACTOR");
  int values[2] = {0, 0};
  const std::string_view parts[2] = {std::string_view(text).substr(0, comma),
                                     std::string_view(text).substr(comma + 1)};
  for (int i = 0; i < 2; ++i) {
    const auto [end, error] = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), values[i]);
    if (error != std::errc() || end != parts[i].data() + parts[i].size()) values[i] = 0;
  }
  const Knobs knobs{values[0], values[1]};
  if (!knobs.valid())
    throw Error("--config " + text + ": K_layers must be in 1.." + std::to_string(kMaxKLayers) +
                " and k_block_factor in 1.." + std::to_string(kMaxKBlockFactor));
  return {"explicit", knobs};
}

// A picker over answers chosen now, for every shape: a shape a source cannot
// answer (one the database lacks) fails before anything is measured, not an
// hour into the run.
ConfigPicker answer_now(const std::vector<GemmShape>& shapes,
                        const std::function<Knobs(const GemmShape&)>& answer) {
  auto configs = std::make_shared<std::vector<std::pair<GemmShape, Knobs>>>();
  for (const GemmShape& shape : shapes) configs->emplace_back(shape, answer(shape));
  return [configs](const GemmShape& shape) {
    for (const auto& [known, config] : *configs)
      if (known.m == shape.m && known.n == shape.n && known.k == shape.k) return config;
    throw Error("no configuration was chosen for " + to_string(shape));
  };
}

ConfigPicker make_picker(const ConfigChoice& choice, const std::vector<GemmShape>& shapes,
                         const BenchOptions& options, const Calibration& calibration,
                         const Platform& platform, const std::vector<TuningTable>& tables,
                         const std::string& db) {
  if (choice.source == "best") return quick_search_picker(options);
  if (choice.source == "explicit") return answer_now(shapes, [&](const GemmShape&) { return choice.knobs; });
  if (choice.source == "default") return answer_now(shapes, [](const GemmShape&) { return Knobs{}; });
  if (choice.source == "model") {
    const AnalyticalModel model(calibration, platform.l2_bytes);
    return answer_now(shapes, [&](const GemmShape& shape) {
      return model.predict(shape, options.dtype, options.threads, options.layout).knobs;
    });
  }
  // "tuned": the shape's own winner; "nn": the nearest tuned shape's;
  // "policy": what sfc-tune query, libsfcconf and sfc::gemm answer (the
  // neighbours within their reach, the fitted model beyond). All from the
  // shapes tuned through the benchmark's layout, or those the predictor
  // borrows where the tables have none of that layout.
  const bool own_layout = std::any_of(tables.begin(), tables.end(), [&](const TuningTable& t) {
    return std::any_of(t.shapes.begin(), t.shapes.end(), [&](const TunedShape& s) {
      return s.layout == options.layout && s.dtype == options.dtype && s.threads == options.threads;
    });
  });
  if (!own_layout && options.layout != Layout::blocked)
    spdlog::warn(
        "--config {}: {} has no shapes tuned through the {} layout; borrowing another layout's "
        "winners (tune with --layout {} for this entry's own)",
        choice.source, db, to_string(options.layout), to_string(options.layout));
  const ConfigPredictor predictor(tables, {}, platform);
  return answer_now(shapes, [&](const GemmShape& shape) {
    if (choice.source == "nn")
      return predictor.predict(Predictor::nearest, shape, options.dtype, options.threads, options.layout);
    const Answer answer = predictor.query(shape, options.dtype, options.threads, options.layout);
    if (choice.source == "tuned" && answer.tier != Tier::exact)
      throw Error("--config tuned: " + db + " has no tuned " + to_string(shape) + " " +
                  std::string(to_string(options.dtype)) + " on " + std::to_string(options.threads) +
                  " threads for this platform (tune it first, or use --config nn)");
    return answer.knobs;
  });
}

// Environment variables that change what an implementation runs: OpenBLAS's
// core type, BLIS's and OpenMP's threading, LIBXSMM's target ISA, the cold
// footprint. They go into the report, since a run is only reproducible with them.
std::vector<std::string> steering_environment() {
  static constexpr std::string_view kPrefixes[] = {"OPENBLAS_", "GOTO",  "BLIS_", "DNNL_",    "ONEDNN_",
                                                   "OMP_",      "GOMP_", "KMP_",  "LIBXSMM_", "SFC_"};
  std::vector<std::string> found;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string_view text(*variable);
    for (std::string_view prefix : kPrefixes)
      if (text.starts_with(prefix)) found.emplace_back(text);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The 1-minute load average: other work on the machine skews every timing.
double load_average() {
  double load = -1;
  std::ifstream("/proc/loadavg") >> load;
  return load;
}

// This process's CPU priority: its nice value and, where Linux groups
// sessions (autogroup), its session's, which weighs first between sessions.
std::string scheduling_priority() {
  std::string text = "nice " + std::to_string(getpriority(PRIO_PROCESS, 0));
  std::string autogroup;  // "/autogroup-7 nice 0"
  if (std::getline(std::ifstream("/proc/self/autogroup"), autogroup)) {
    const auto nice = autogroup.rfind("nice ");
    if (nice != std::string::npos) text += ", autogroup " + autogroup.substr(nice);
  }
  return text;
}

// Opens an output file before the (long) run, so a bad path fails at once.
std::unique_ptr<std::ofstream> open_output(const std::string& path, const char* option,
                                           const std::string& db) {
  if (path.empty()) return nullptr;
  refuse_database_file_as_output(path, db, option);
  try {
    check_output_file(path);  // a pipe nobody reads would block the open
  } catch (const Error& e) {
    throw Error(std::string(option) + ": " + e.what());
  }
  auto out = std::make_unique<std::ofstream>(path);
  if (!*out) throw Error(std::string(option) + ": cannot write " + path);
  return out;
}

void close_output(std::ofstream& out, const std::string& path) {
  out.close();
  if (!out) throw Error("writing " + path + " failed");
}

void run_bench_command(const BenchArguments& a) {
  // Everything the user typed is checked before anything is measured.
  const std::vector<GemmShape> shapes = a.source.shapes().shapes();
  BenchOptions options;
  options.dtype = parse_dtype(a.dtype);
  options.layout = parse_layout(a.layout);
  options.threads = a.threads > 0 ? a.threads : default_threads();
  options.reps = a.reps;
  options.passes = a.passes;
  options.min_seconds = a.min_seconds;
  options.warmup = a.warmup;
  options.statistic = a.statistic == "mean" ? Statistic::mean : Statistic::min;
  options.count_every_peer = a.count_every_peer;
  // Every --trans with every --beta: the first pair is SFC-CA's call, the rest
  // variants timed beside it.
  if (a.trans.empty() || a.beta.empty()) throw Error("--trans and --beta need at least one value each");
  std::vector<GemmArguments> calls;
  for (const std::string& trans : a.trans)
    for (double beta : a.beta)
      calls.push_back({.trans_a = trans[0] == 'T' ? Transpose::transpose : Transpose::none,
                       .trans_b = trans[1] == 'T' ? Transpose::transpose : Transpose::none,
                       .alpha = a.alpha,
                       .beta = beta});
  options.call = calls.front();
  options.variants.assign(calls.begin() + 1, calls.end());
  if (options.layout == Layout::blocked && (calls.size() > 1 || !options.call.plain_product()))
    throw Error("--trans, --alpha and --beta need --layout row or col (the blocked entry is C = A*B)");
  const std::vector<std::string> peer_names = parse_peer_list(a.vs);
  const ConfigChoice config = parse_config_choice(a.config, a.db);
  // A TuningStore database or an exported tuning table: this machine's (or a
  // compatible one's) tables, or those --platform / SFC_PLATFORM choose.
  const PlatformChoice platform_choice = PlatformChoice::parse_or_environment(a.platform);
  const std::vector<TuningTable> tables =
      a.db.empty() ? std::vector<TuningTable>{} : load_tuning_tables(a.db, platform_choice);
  auto csv = open_output(a.csv, "--csv", a.db);
  auto plot = open_output(a.plot, "--plot", a.db);

  const double load_at_start = load_average();
  const Platform platform = detect_platform(options.threads);
  BenchContext context;
  context.command_line = command_line();
  context.platform = platform.cpu_model + ", ISA " + platform.isa + ", " + std::to_string(platform.cores) +
                     " cores, platform " + platform.hash();
  context.dtype = options.dtype;
  context.layout = options.layout;
  context.threads = options.threads;
  context.config_source = a.config;
  context.environment = steering_environment();

  // Calibration, roofline, peak, bf16's kernel: measured before the shapes.
  const Calibration calibration = prepare_bench(options, tables, a.db, context);
  const ConfigPicker picker = make_picker(config, shapes, options, calibration, platform, tables, a.db);

  std::vector<std::unique_ptr<GemmPeer>> peers;
  std::vector<std::string> load_notes;
  for (const std::string& name : peer_names) {
    PeerLoad load = load_peer(name);
    if (!load.peer) {
      spdlog::warn("{}", load.note);
      load_notes.push_back(load.note);
      continue;
    }
    context.libraries.push_back(load.peer->description());
    peers.push_back(std::move(load.peer));
  }

  // A signal ends the run after the shape being measured; what was measured
  // is reported, then the exit code says it was cut short (130 for Ctrl-C).
  const StopOnSignals stop_on_signals(
      "\nsfc-tune: interrupted: finishing the current shape, then reporting those done "
      "(interrupt again to abort at once)\n");
  options.stop = stop_requested();
  BenchResult result = run_bench(shapes, options, picker, std::move(peers), context.roofline);
  if (result.interrupted && result.shapes.empty()) {
    spdlog::error("interrupted before the first shape was measured: nothing to report");
    throw CLI::RuntimeError(interrupted_exit_code());
  }
  result.notes.insert(result.notes.begin(), load_notes.begin(), load_notes.end());
  recheck_peak(options, result, context);
  context.machine_load = fmt::format("load average {:.2f} at the start, {:.2f} at the end ({} cores); {}",
                                     load_at_start, load_average(), platform.cores, scheduling_priority());
  const BenchSummary summary = summarize(result);

  std::ostringstream table;
  write_table(table, context, result, summary);
  std::fputs(table.str().c_str(), human_output(a.json));
  if (csv) {
    write_csv(*csv, result, summary);
    close_output(*csv, a.csv);
  }
  if (plot) {
    write_svg(*plot, context, result);
    close_output(*plot, a.plot);
  }
  if (a.json) std::printf("%s\n", to_json(context, result, summary).dump().c_str());
  std::fflush(stdout);

  for (const ShapeMeasurement& m : result.shapes)
    if (m.max_error_ratio > 1) throw CLI::RuntimeError("a result differs from the fp64 reference", 1);
  if (result.interrupted) throw CLI::RuntimeError(interrupted_exit_code());
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArguments>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time SFC-CA GEMM against OpenBLAS, BLIS and oneDNN, shape by shape, on cold inputs");
  a->source.add_options(cmd);
  cmd->add_option("--dtype", a->dtype, "Element type: f32, f64 or bf16")->capture_default_str();
  cmd->add_option("--threads", a->threads,
                  "Threads for every implementation (default: OMP_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--config", a->config,
                  "SFC-CA configuration: tuned | nn | policy (what query and sfc::gemm answer) | model | "
                  "default (1,1) | best (quick search on the spot) | K_LAYERS,K_BLOCK_FACTOR")
      ->capture_default_str();
  cmd->add_option(
      "--db", a->db,
      "Tuning database or exported tuning table: winners (or (1,1) where it ties them within 2%) for "
      "--config tuned, nn or policy, and the stored calibration for the roofline");
  cmd->add_option("--platform", a->platform,
                  "Whose results in --db: this (this machine's or a compatible one's), any (forced, foreign "
                  "included) or a platform hash (default: SFC_PLATFORM, else this)");
  cmd->add_option("--vs", a->vs, "Peers, comma separated: openblas, blis, onednn; or none (SFC-CA alone)")
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "Timed repetitions per shape and implementation")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "Untimed warm-up runs before them")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option(
         "--passes", a->passes,
         "Time each shape's implementations this many times in turn (--reps runs each time) and pool "
         "the runs, so that a burst of interference hits one pass, not one implementation")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option(
         "--min-time", a->min_seconds,
         fmt::format("Seconds each pass runs at least per implementation: small shapes get more than "
                     "--reps runs (estimated from the roofline, the same count for every "
                     "implementation, at most {})",
                     kMaxBenchReps))
      ->check(real_range(0.0, 60.0))
      ->capture_default_str();
  cmd->add_option("--statistic", a->statistic,
                  "Time of a shape: min (its fastest cold run, as the tuner ranks) or mean (of its runs)")
      ->check(CLI::IsMember({"min", "mean"}))
      ->capture_default_str();
  cmd->add_option("--layout", a->layout,
                  "SFC-CA's entry: blocked (native layout), or row/col (plain row- or column-major matrices, "
                  "packing timed too; the peers get the same matrices)")
      ->check(CLI::IsMember({"blocked", "row", "col"}))
      ->capture_default_str();
  cmd->add_option("--trans", a->trans,
                  "op(A) and op(B) of the plain entry, for SFC-CA and the peers: NN, NT, TN or TT (T: "
                  "transposed). A list "
                  "(NN,NT,TN,TT) times the others beside the first, each reported as an implementation "
                  "(sfc-ca:NT)")
      ->delimiter(',')
      ->check(CLI::IsMember({"NN", "NT", "TN", "TT"}))
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha,
                  "C = alpha op(A) op(B) + beta C (plain entry; the peers run the same call, variants aside)")
      ->check(finite_real)
      ->capture_default_str();
  cmd->add_option("--beta", a->beta, "See --alpha; a list (0,1) as for --trans (sfc-ca:NN:beta=1)")
      ->delimiter(',')
      ->check(finite_real)
      ->capture_default_str();
  cmd->add_option("--csv", a->csv, "Also write the per-shape figures as CSV to this file");
  cmd->add_option("--plot", a->plot,
                  "Also write an SVG plot (GFLOP/s by shape, sorted by arithmetic intensity)");
  cmd->add_flag("--count-every-peer", a->count_every_peer,
                "Count a generic (reference, unoptimised) BLIS build in the best-peer ratio too (by default "
                "it is timed and listed, and left out of that ratio with a note)");
  cmd->add_flag("--json", a->json, "stdout is one JSON object (the readable lines go to stderr)");
  cmd->callback([a] { run_bench_command(*a); });
}

}  // namespace sfc::cli
