// `sfc-tune query`, `calibrate` and `evaluate`: the predictor's commands.
// query goes through libsfcconf, as a program would; evaluate scores every
// predictor on shapes it was not built from.
#include <omp.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.hpp"
#include "sfc/calibration.hpp"
#include "sfc/config_set.hpp"
#include "sfc/error.hpp"
#include "sfc/ranked_replay.hpp"
#include "sfc/regret.hpp"
#include "sfc/sfcconf_enums.hpp"
#include "sfc/shape_grid.hpp"
#include "sfc/tuner.hpp"
#include "sfc/tuning_source.hpp"
#include "sfc/tuning_store.hpp"
#include "sfcconf.hpp"

namespace sfc::cli {
namespace {

// JSON has no infinity: a distance to no tuned shape at all is null.
nlohmann::json distance_json(double d) { return std::isfinite(d) ? nlohmann::json(d) : nullptr; }

constexpr const char* kPlatformHelp =
    "Whose results to use: this (this machine's, else a compatible one's), any (forced: foreign "
    "ones too) or a platform hash (default: SFC_PLATFORM, else this)";

// ---- query -----------------------------------------------------------------

struct QueryOptions {
  std::int64_t m = 0, n = 0, k = 0;
  std::string db = kDefaultDb, platform, dtype = "f32", layout = "blocked";
  int threads = 0;
  bool json = false;
};

void run_query(const QueryOptions& o) {
  std::FILE* const out = human_output(o.json);
  const DType dtype = parse_dtype(o.dtype);
  const Layout layout = parse_layout(o.layout);
  const int threads = o.threads > 0 ? o.threads : default_threads();
  const std::string& path = o.db;
  sfcconf::TunedConfigs::Match match;
  try {
    const sfcconf::TunedConfigs configs(path, o.platform);
    match = configs.query_match(o.m, o.n, o.k, to_sfcconf(dtype), threads, to_sfcconf(layout));
  } catch (const sfcconf::Error& e) {
    throw Error(e.what());  // a one-line message, exit code 2
  }
  const sfcconf_answer& a = match.answer;
  const std::string tier = sfcconf_tier_name(a.tier);
  const std::string platform = sfcconf_platform_match_name(match.platform);
  std::fprintf(
      out, "%lldx%lldx%lld %s on %d threads, %s layout: k_layers=%d k_block_factor=%d (tier %s, platform %s",
      (long long)o.m, (long long)o.n, (long long)o.k, o.dtype.c_str(), threads, o.layout.c_str(), a.k_layers,
      a.k_block_factor, tier.c_str(), platform.c_str());
  const bool borrowed = to_sfcconf(layout) != match.source;
  const std::string source = match.source == SFCCONF_BLOCKED     ? "blocked"
                             : match.source == SFCCONF_ROW_MAJOR ? "row"
                                                                 : "col";
  if (borrowed) std::fprintf(out, ", borrowed from the %s layout's tuned shapes", source.c_str());
  if (std::isfinite(a.distance))
    std::fprintf(out, ", nearest tuned shape %lldx%lldx%lld at log2 distance %.3f)\n", (long long)a.nearest_m,
                 (long long)a.nearest_n, (long long)a.nearest_k, a.distance);
  else
    std::fprintf(out, ", no tuned shape of this dtype and thread count)\n");
  if (!o.json) return;
  nlohmann::json j = {{"m", o.m},
                      {"n", o.n},
                      {"k", o.k},
                      {"dtype", o.dtype},
                      {"threads", threads},
                      {"layout", o.layout},
                      {"k_layers", a.k_layers},
                      {"k_block_factor", a.k_block_factor},
                      {"tier", tier},
                      {"platform", platform},
                      {"distance", distance_json(a.distance)},
                      {"borrowed_from", borrowed ? nlohmann::json(source) : nlohmann::json(nullptr)},
                      {"nearest", nullptr}};
  if (std::isfinite(a.distance)) j["nearest"] = {{"m", a.nearest_m}, {"n", a.nearest_n}, {"k", a.nearest_k}};
  std::printf("%s\n", j.dump().c_str());
}

// ---- calibrate -------------------------------------------------------------

struct CalibrateOptions {
  std::string db = kDefaultDb;
  bool db_named = false;  // --db given: then the database is created when absent
  int threads = 0;
  bool json = false;
};

void run_calibrate(const CalibrateOptions& o) {
  std::FILE* const out = human_output(o.json);
  // A database appears only where one was asked for, never in whatever folder the command ran in.
  std::error_code error;
  if (!o.db_named && !std::filesystem::exists(o.db, error))
    throw Error("calibrate: no database " + o.db +
                " here to store the calibration in: tune into it first, or name one with --db (created "
                "if absent)");
  const Platform platform = detect_platform(o.threads > 0 ? o.threads : default_threads());
  spdlog::info("calibrating {} ...", describe(platform));
  const Calibration c = calibrate(platform.threads);
  TuningStore store(o.db, TuningStore::Mode::create);
  store.upsert_platform(platform);
  store.save_calibration(platform.hash(), c);
  std::fprintf(out,
               "platform %s: gamma %.1f GFLOP/s per core (fp32 batch-reduce GEMM), beta %.1f GB/s "
               "(%d threads reading); stored in %s\n",
               describe(platform).c_str(), c.gamma_gflops_per_core, c.beta_gbytes_per_s, platform.threads,
               o.db.c_str());
  if (o.json)
    std::printf("%s\n", nlohmann::json({{"platform", platform.hash()},
                                        {"threads", platform.threads},
                                        {"gamma_gflops_per_core", c.gamma_gflops_per_core},
                                        {"beta_gbytes_per_s", c.beta_gbytes_per_s},
                                        {"db", o.db}})
                            .dump()
                            .c_str());
}

// ---- evaluate --------------------------------------------------------------

struct EvaluateOptions {
  std::string db = kDefaultDb, test_db, test_shapes, floor_db, platform, dtype = "f32", layout = "blocked",
              policy_rule = "auto";
  std::optional<double> holdout;
  std::optional<std::int64_t> train_max;
  std::uint64_t seed = 1;
  int threads = 0, warmup = 2, reps = 5;  // warm-up as tune's
  PredictorOptions predictor;
  bool json = false;
  // --search ranked --replay DB: replay the ranked search instead.
  std::string search = "exhaustive", replay, prior;
  ReplayOptions replay_options;
  bool no_model = false, per_shape = false;
};

std::vector<TunedShape> shapes_of(const std::vector<TuningTable>& tables, DType dtype, int threads,
                                  Layout layout) {
  std::vector<TunedShape> shapes;
  for (const TuningTable& t : tables)
    for (const TunedShape& s : t.shapes)
      if (s.dtype == dtype && s.threads == threads && s.layout == layout) shapes.push_back(s);
  return shapes;
}

// Test shapes from a shape file: stored measurements where --db tuned the
// shape, every configuration timed now otherwise.
std::vector<TunedShape> shapes_from_file(const std::string& path, const std::vector<TuningTable>& tables,
                                         const Tuner& tuner) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, TunedShape> tuned;
  for (const TunedShape& s :
       shapes_of(tables, tuner.options().dtype, tuner.options().threads, tuner.options().layout))
    tuned.emplace(std::tuple{s.shape.m, s.shape.n, s.shape.k}, s);
  std::vector<TunedShape> tests;
  const ShapeGrid grid = ShapeGrid::load(path);
  for (const GemmShape& shape : grid.shapes()) {
    if (auto it = tuned.find({shape.m, shape.n, shape.k}); it != tuned.end()) {
      tests.push_back(it->second);
      continue;
    }
    spdlog::info("timing all 64 configurations of {}x{}x{} ({} of {})", shape.m, shape.n, shape.k,
                 tests.size() + 1, grid.size());
    tests.push_back(tuner.tune(shape, ConfigSet::all()).result);
  }
  return tests;
}

nlohmann::json summary_json(const RegretSummary& s) {
  return {{"mean", s.mean}, {"median", s.median}, {"p95", s.p95}, {"max", s.max}};
}

// How the policy's nearest tier was set up for the evaluated dtype and threads.
struct PolicyChoice {
  std::string rule;
  double max_distance;
  std::string thin_rule;  // for thin shapes (sfc::ShapeRegime)
  double thin_max_distance;
  double l2_fraction;          // of the model and default tiers
  double reread_rate;          // the model's, of a thread's bandwidth share
  double round_slab_fraction;  // of L2, a round's tile slabs in its blocked answers (inf: no cap)
  double shared_slab_room;     // tiles' slabs L2 holds for consecutive tiles to share one
};

// The policy's mean regret per tier that answered, printed and as JSON.
nlohmann::json tier_breakdown(const RegretReport& r, std::FILE* text) {
  nlohmann::json out = nlohmann::json::object();
  const std::size_t policy = all_predictors.size() - 1;
  for (Tier t : {Tier::exact, Tier::nearest, Tier::model, Tier::default_config}) {
    double sum = 0;
    int count = 0;
    for (const ShapeRegret& s : r.shapes)
      if (s.policy_tier == t) sum += s.regret[policy], ++count;
    if (count == 0) continue;
    std::fprintf(text, "  policy regret on the %d shapes its %s tier answered: %.2f%% mean\n", count,
                 std::string(to_string(t)).c_str(), 100 * sum / count);
    out[std::string(to_string(t))] = {{"shapes", count}, {"mean", sum / count}};
  }
  return out;
}

// Each predictor's mean regret by the test shape's log2 distance to its
// nearest training shape: where a neighbour's answer stops carrying over.
nlohmann::json distance_breakdown(const RegretReport& r, std::FILE* text) {
  constexpr double edges[] = {0, 0.5, 1, 1.5, 2, 3, 4};
  nlohmann::json out = nlohmann::json::array();
  std::fprintf(text, "mean regret by log2 distance to the nearest training shape:\n%-12s %6s", "distance",
               "shapes");
  for (Predictor p : all_predictors) std::fprintf(text, " %8s", std::string(to_string(p)).c_str());
  std::fprintf(text, "\n");
  for (std::size_t b = 0; b < std::size(edges); ++b) {
    const double from = edges[b], to = b + 1 < std::size(edges) ? edges[b + 1] : INFINITY;
    std::array<double, all_predictors.size()> sum{};
    std::array<int, all_predictors.size()> answered{};
    int count = 0;
    for (const ShapeRegret& s : r.shapes) {
      if (!(s.distance >= from && s.distance < to)) continue;
      ++count;
      for (std::size_t i = 0; i < all_predictors.size(); ++i)
        if (std::isfinite(s.regret[i])) sum[i] += s.regret[i], ++answered[i];
    }
    if (count == 0) continue;
    char range[32];
    std::snprintf(range, sizeof range, std::isfinite(to) ? "[%g, %g)" : "[%g, inf)", from, to);
    std::fprintf(text, "%-12s %6d", range, count);
    nlohmann::json row = {{"from", from}, {"to", distance_json(to)}, {"shapes", count}};
    for (std::size_t i = 0; i < all_predictors.size(); ++i) {
      if (answered[i] == 0) {
        std::fprintf(text, " %8s", "-");
        continue;
      }
      std::fprintf(text, " %7.2f%%", 100 * sum[i] / answered[i]);
      row[std::string(to_string(all_predictors[i]))] = sum[i] / answered[i];
    }
    std::fprintf(text, "\n");
    out.push_back(row);
  }
  return out;
}

void print_report(const RegretReport& r, const std::optional<NoiseFloor>& floor, const PolicyChoice& policy,
                  const EvaluateOptions& o) {
  std::FILE* const out = human_output(o.json);
  std::fprintf(out, "regret = time(predicted) / time(best) - 1 over %zu test shapes\n", r.shapes.size());
  std::fprintf(out,
               "(the policy's nearest tier: %s rule within log2 distance %g, for thin shapes %s within %g;"
               " L2 fraction %g, re-read rate %g, round slabs within %g of L2, room for %g tiles' slabs%s)\n",
               policy.rule.c_str(), policy.max_distance, policy.thin_rule.c_str(), policy.thin_max_distance,
               policy.l2_fraction, policy.reread_rate, policy.round_slab_fraction, policy.shared_slab_room,
               o.predictor.l2_fraction
                   ? ""
                   : " within the tuned shapes' sizes; the paper's fraction and rate, and the cap, beyond");
  std::fprintf(out, "%-10s %8s %8s %8s %8s\n", "predictor", "mean", "median", "p95", "max");
  nlohmann::json regret = nlohmann::json::object();
  for (std::size_t i = 0; i < all_predictors.size(); ++i) {
    const std::string name(to_string(all_predictors[i]));
    if (!r.summary[i]) {
      std::fprintf(out, "%-10s (cannot answer: no calibration, or no tuned shapes of this thread count)\n",
                   name.c_str());
      continue;
    }
    const RegretSummary& s = *r.summary[i];
    std::fprintf(out, "%-10s %7.2f%% %7.2f%% %7.2f%% %7.2f%%\n", name.c_str(), 100 * s.mean, 100 * s.median,
                 100 * s.p95, 100 * s.max);
    regret[name] = summary_json(s);
  }
  nlohmann::json floor_json = nullptr;
  if (floor) {
    const RegretSummary& s = floor->summary;
    std::fprintf(out,
                 "%-10s %7.2f%% %7.2f%% %7.2f%% %7.2f%%  (the winners of --floor-db on %zu of the shapes)\n",
                 "floor", 100 * s.mean, 100 * s.median, 100 * s.p95, 100 * s.max, floor->shapes);
    floor_json = summary_json(s);
    floor_json["shapes"] = floor->shapes;
  }
  nlohmann::json tiers = nlohmann::json::object();
  std::fprintf(out, "policy tiers:");
  for (Tier t : {Tier::exact, Tier::nearest, Tier::model, Tier::default_config}) {
    std::fprintf(out, " %s %d", std::string(to_string(t)).c_str(), r.tier_counts[std::size_t(t)]);
    tiers[std::string(to_string(t))] = r.tier_counts[std::size_t(t)];
  }
  std::fprintf(out, "\n");
  const nlohmann::json by_tier = tier_breakdown(r, out), by_distance = distance_breakdown(r, out);
  if (!o.json) return;
  nlohmann::json shapes = nlohmann::json::array();
  for (const ShapeRegret& s : r.shapes) {
    nlohmann::json row = {{"m", s.test.shape.m},
                          {"n", s.test.shape.n},
                          {"k", s.test.shape.k},
                          {"winner", {s.test.k_layers, s.test.k_block_factor}},
                          {"policy_tier", std::string(to_string(s.policy_tier))}};
    for (std::size_t i = 0; i < all_predictors.size(); ++i)
      if (std::isfinite(s.regret[i]))
        row[std::string(to_string(all_predictors[i]))] = {{"k_layers", s.knobs[i].k_layers},
                                                          {"k_block_factor", s.knobs[i].k_block_factor},
                                                          {"regret", s.regret[i]}};
    shapes.push_back(row);
  }
  std::printf("%s\n", nlohmann::json({{"test_shapes", r.shapes.size()},
                                      {"policy_rule", policy.rule},
                                      {"policy_max_distance", distance_json(policy.max_distance)},
                                      {"policy_thin_rule", policy.thin_rule},
                                      {"policy_thin_max_distance", distance_json(policy.thin_max_distance)},
                                      {"l2_fraction", distance_json(policy.l2_fraction)},
                                      {"reread_rate", policy.reread_rate},
                                      {"round_slab_fraction", distance_json(policy.round_slab_fraction)},
                                      {"shared_slab_room", policy.shared_slab_room},
                                      {"regret", regret},
                                      {"floor", floor_json},
                                      {"policy_tiers", tiers},
                                      {"by_tier", by_tier},
                                      {"by_distance", by_distance},
                                      {"shapes", shapes}})
                          .dump()
                          .c_str());
}

void run_evaluate(const EvaluateOptions& o) {
  const DType dtype = parse_dtype(o.dtype);
  const int threads = o.threads > 0 ? o.threads : default_threads();
  const Layout layout = parse_layout(o.layout);
  const Tuner tuner(
      {.dtype = dtype, .threads = threads, .warmup = o.warmup, .reps = o.reps, .layout = layout});
  const PlatformChoice choice = PlatformChoice::parse_or_environment(o.platform);
  std::vector<TuningTable> tables = load_tuning_tables(o.db, choice);

  HeldOut split;
  if (o.holdout) {
    split = hold_out(std::move(tables), dtype, threads, layout, *o.holdout, o.seed);
  } else if (o.train_max && o.test_db.empty() && o.test_shapes.empty()) {
    split = hold_out_range(std::move(tables), std::nullopt, dtype, threads, layout, *o.train_max);
  } else {
    std::vector<TunedShape> tests =
        o.test_db.empty() ? shapes_from_file(o.test_shapes, tables, tuner)
                          : shapes_of(load_tuning_tables(o.test_db, choice), dtype, threads, layout);
    if (tests.empty())
      throw Error("no tuned " + o.dtype + " shapes on " + std::to_string(threads) + " threads (" + o.layout +
                  " layout) in " + o.test_db);
    split = o.train_max
                ? hold_out_range(std::move(tables), std::move(tests), dtype, threads, layout, *o.train_max)
                : exclude_tests(std::move(tables), std::move(tests));
  }
  spdlog::info("evaluating on {} test shapes, predictors built from the rest", split.tests.size());
  PredictorOptions options = o.predictor;
  options.policy_rule = o.policy_rule == "nearest" ? NeighbourRule::nearest
                        : o.policy_rule == "vote"  ? NeighbourRule::vote
                                                   : NeighbourRule::automatic;
  const ConfigPredictor predictor(split.training, options);
  const ConfigTimer timer = [&](const GemmShape& shape, DType, int, Layout, Knobs k) {
    spdlog::info("timing k_layers={} k_block_factor={} on {}x{}x{} (not measured)", k.k_layers,
                 k.k_block_factor, shape.m, shape.n, shape.k);
    const auto kl = std::to_string(k.k_layers), kbf = std::to_string(k.k_block_factor);
    return double(tuner.tune(shape, ConfigSet::parse(kl, kbf)).result.seconds[k.index()]);
  };
  const PolicyChoice policy{
      std::string(to_string(predictor.policy_rule(dtype, threads, layout))),
      predictor.policy_max_distance(dtype, threads, layout),
      std::string(to_string(predictor.policy_rule(dtype, threads, layout, ShapeRegime::thin))),
      predictor.policy_max_distance(dtype, threads, layout, ShapeRegime::thin),
      predictor.l2_fraction(threads),
      predictor.reread_rate(threads),
      predictor.round_slab_fraction(threads),
      predictor.shared_slab_room(threads)};
  const RegretReport report = evaluate_regret(predictor, std::move(split.tests), timer);
  std::optional<NoiseFloor> floor;
  if (!o.floor_db.empty()) {
    std::vector<TunedShape> tested;
    for (const ShapeRegret& s : report.shapes) tested.push_back(s.test);
    floor = noise_floor(tested, shapes_of(load_tuning_tables(o.floor_db, choice), dtype, threads, layout));
    if (!floor)
      throw Error(o.floor_db + " holds none of the test shapes (" + o.dtype + ", " + std::to_string(threads) +
                  " threads, " + o.layout + " layout) with a winner the test timed");
  }
  print_report(report, floor, policy, o);
}

// The shapes of (dtype, threads (0: any), layout) in `path`, and the first table's
// calibration and L2 size (any platform: replay reads other machines' tables).
struct ReplaySource {
  std::vector<TunedShape> shapes;
  std::optional<AnalyticalModel> model;
};
ReplaySource replay_source(const std::string& path, DType dtype, int threads, Layout layout) {
  ReplaySource source;
  for (const TuningTable& t : load_tuning_tables(path, PlatformChoice::parse("any"))) {
    const std::size_t before = source.shapes.size();
    for (const TunedShape& s : t.shapes)
      if (s.dtype == dtype && s.layout == layout && (threads == 0 || s.threads == threads))
        source.shapes.push_back(s);
    if (source.shapes.size() == before) continue;
    if (!source.model && t.calibration.gamma_gflops_per_core > 0)
      source.model.emplace(t.calibration, t.platform.l2_bytes);
  }
  return source;
}

nlohmann::json knobs_json(Knobs k) { return {k.k_layers, k.k_block_factor}; }

// evaluate --search ranked --replay DB (sfc/ranked_replay.hpp).
void run_replay(const EvaluateOptions& o) {
  std::FILE* const out = human_output(o.json);
  const DType dtype = parse_dtype(o.dtype);
  const Layout layout = parse_layout(o.layout);
  ReplaySource source = replay_source(o.replay, dtype, 0, layout);
  // The thread count: --threads, else the one the replayed shapes have.
  int threads = o.threads;
  if (threads == 0 && !source.shapes.empty()) threads = source.shapes.front().threads;
  std::erase_if(source.shapes, [&](const TunedShape& s) { return s.threads != threads; });
  if (source.shapes.empty())
    throw Error("no tuned " + o.dtype + " shapes" +
                (threads ? " on " + std::to_string(threads) + " threads" : "") + " (" + o.layout +
                " layout) in " + o.replay);
  std::vector<TunedShape> prior;
  if (!o.prior.empty()) prior = replay_source(o.prior, dtype, threads, layout).shapes;
  ReplayOptions options = o.replay_options;
  options.seed = o.seed;
  options.use_model = !o.no_model;
  const ReplayReport r = replay_ranked(source.shapes, prior, source.model, options);

  const auto& g = r.regret;
  const auto& e = r.exhaustive_regret;
  if (o.per_shape)
    for (const ReplayedShape& s : r.shapes)
      std::fprintf(out,
                   "%-18s confidence %.2f shortlist %2zu screened %2d timed fully %d rounds %d runs %3lld "
                   "winner %d,%d best %d,%d regret %.2f%%\n",
                   to_string(s.shape).c_str(), s.ranking.confidence, s.ranking.shortlist().size(),
                   s.race.screened, s.race.fully_timed, s.race.rounds, s.race.runs, s.race.winner.k_layers,
                   s.race.winner.k_block_factor, s.best.k_layers, s.best.k_block_factor, 100 * s.regret);
  std::fprintf(
      out,
      "replay of the ranked search on %zu %s shapes (%d threads, %s layout) of %s%s%s, seed %llu, "
      "run noise %.3f, outliers %.3f\n",
      r.shapes.size(), o.dtype.c_str(), threads, o.layout.c_str(), o.replay.c_str(),
      prior.empty() ? "" : (", prior " + o.prior + " (" + std::to_string(prior.size()) + " shapes)").c_str(),
      source.model && !o.no_model ? ", model" : ", no model", static_cast<unsigned long long>(o.seed),
      options.noise, options.outlier_rate);
  std::fprintf(out,
               "  per shape: %.1f configurations screened, %.1f timed fully, %.1f runs (exhaustive: %.1f)\n",
               r.mean_screened, r.mean_fully_timed, double(r.runs) / double(r.shapes.size()),
               double(r.exhaustive_runs) / double(r.shapes.size()));
  std::fprintf(out, "  run-seconds drawn: ranked %.3f, exhaustive %.3f (%.1fx less)\n", r.run_seconds,
               r.exhaustive_run_seconds, r.exhaustive_run_seconds / std::max(r.run_seconds, 1e-300));
  std::fprintf(out, "  regret      ranked: mean %.2f%% median %.2f%% p95 %.2f%% max %.2f%%\n", 100 * g.mean,
               100 * g.median, 100 * g.p95, 100 * g.max);
  std::fprintf(out,
               "  regret  exhaustive: mean %.2f%% median %.2f%% p95 %.2f%% max %.2f%% (a second run on the "
               "same draws)\n",
               100 * e.mean, 100 * e.median, 100 * e.p95, 100 * e.max);
  if (!o.json) return;
  nlohmann::json shapes = nlohmann::json::array();
  for (const ReplayedShape& s : r.shapes)
    shapes.push_back({{"shape", to_string(s.shape)},
                      {"confidence", s.ranking.confidence},
                      {"shortlist", s.ranking.shortlist().size()},
                      {"screened", s.race.screened},
                      {"fully_timed", s.race.fully_timed},
                      {"rounds", s.race.rounds},
                      {"runs", s.race.runs},
                      {"winner", knobs_json(s.race.winner)},
                      {"best", knobs_json(s.best)},
                      {"best_rank", s.best_rank},
                      {"regret", s.regret},
                      {"exhaustive_winner", knobs_json(s.exhaustive_winner)},
                      {"exhaustive_regret", s.exhaustive_regret}});
  print_json({{"command", "evaluate"},
              {"search", "ranked"},
              {"replay", o.replay},
              {"prior", o.prior},
              {"dtype", o.dtype},
              {"threads", threads},
              {"layout", o.layout},
              {"seed", o.seed},
              {"noise", options.noise},
              {"outlier_rate", options.outlier_rate},
              {"model", source.model.has_value() && !o.no_model},
              {"mean_screened", r.mean_screened},
              {"mean_fully_timed", r.mean_fully_timed},
              {"runs", r.runs},
              {"exhaustive_runs", r.exhaustive_runs},
              {"run_seconds", r.run_seconds},
              {"exhaustive_run_seconds", r.exhaustive_run_seconds},
              {"regret", summary_json(r.regret)},
              {"exhaustive_regret", summary_json(r.exhaustive_regret)},
              {"shapes", shapes}});
}

}  // namespace

void add_predict_commands(CLI::App& app) {
  auto q = std::make_shared<QueryOptions>();
  CLI::App* query = app.add_subcommand(
      "query", "Which (K_layers, k_block_factor) to use for M N K, from tuned shapes or the model");
  query->add_option("M", q->m, "Rows of A and C")->required()->check(gemm_size);
  query->add_option("N", q->n, "Columns of B and C")->required()->check(gemm_size);
  query->add_option("K", q->k, "Columns of A, rows of B")->required()->check(gemm_size);
  query
      ->add_option("--db,--table", q->db,
                   "Tuning database, exported tuning table, or a folder of tables (the one for this machine, "
                   "dtype and threads is chosen; --table is the older spelling)")
      ->capture_default_str();
  query->add_option("--platform", q->platform, kPlatformHelp);
  query->add_option("--dtype", q->dtype, "Element type: f32, f64 or bf16")
      ->check(CLI::IsMember({"f32", "f64", "bf16"}))
      ->capture_default_str();
  query->add_option("--threads", q->threads, "Threads the GEMM runs with (default: all cores)")
      ->check(CLI::Range(1, 4096));
  query
      ->add_option("--layout", q->layout,
                   "How the GEMM is called: blocked, or row/col (plain matrices; tuned on their own)")
      ->check(CLI::IsMember({"blocked", "row", "col"}))
      ->capture_default_str();
  query->add_flag("--json", q->json, "stdout is one JSON object (the readable lines go to stderr)");
  query->callback([q] { run_query(*q); });

  auto c = std::make_shared<CalibrateOptions>();
  CLI::App* cal = app.add_subcommand(
      "calibrate", "Measure this platform's gamma (GFLOP/s per core) and beta (GB/s) for the model");
  CLI::Option* cal_db =
      cal->add_option(
             "--db", c->db,
             "Tuning database to store them in (named, it is created if absent; the default must exist)")
          ->capture_default_str();
  cal->add_option("--threads", c->threads, "Threads (default: all cores)")->check(CLI::Range(1, 4096));
  cal->add_flag("--json", c->json, "stdout is one JSON object (the readable lines go to stderr)");
  cal->callback([c, cal_db] {
    c->db_named = cal_db->count() > 0;
    run_calibrate(*c);
  });

  auto e = std::make_shared<EvaluateOptions>();
  CLI::App* ev = app.add_subcommand("evaluate", "Regret of each predictor on shapes it was not built from");
  ev->add_option("--db", e->db, "Tuning database or table the predictors are built from")
      ->capture_default_str();
  auto* test_db = ev->add_option("--test-db", e->test_db, "Test shapes: those tuned in this database");
  auto* test_shapes = ev->add_option("--test-shapes", e->test_shapes,
                                     "Test shapes: an \"M N K\" file (untuned ones are timed now)");
  auto* holdout =
      ev->add_option("--holdout", e->holdout, "Test shapes: this fraction of --db's shapes, held out")
          ->check(real_range(0.0, 1.0));
  ev->add_option("--seed", e->seed, "Seed of the held-out draw")->check(seed_value)->capture_default_str();
  auto* train_max = ev->add_option("--train-max", e->train_max,
                                   "A range hold-out: train on the shapes whose M, N and K are all at most "
                                   "this, test on those beyond it (of --db, or of --test-db / --test-shapes)")
                        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 31));
  ev->add_option("--floor-db", e->floor_db,
                 "The test shapes tuned again, on their own: adds the row 'floor', the regret of its "
                 "winners by the test's times (what timing noise alone costs a perfect answer)");
  train_max->excludes(holdout);
  test_db->excludes(test_shapes)->excludes(holdout);
  test_shapes->excludes(holdout);
  ev->add_option("--platform", e->platform, kPlatformHelp);
  ev->add_option("--dtype", e->dtype, "Element type: f32, f64 or bf16")
      ->check(CLI::IsMember({"f32", "f64", "bf16"}))
      ->capture_default_str();
  ev->add_option("--threads", e->threads, "Threads (default: all cores)")->check(CLI::Range(1, 4096));
  ev->add_option("--layout", e->layout, "The layout whose tuned shapes are evaluated: blocked, row or col")
      ->check(CLI::IsMember({"blocked", "row", "col"}))
      ->capture_default_str();
  ev->add_option("--max-distance", e->predictor.max_distance,
                 "log2 distance within which the policy takes a neighbour's answer (default: "
                 "chosen from the tuned shapes, leaving each out in turn)")
      ->check(real_range(0.0, std::numeric_limits<double>::max()));
  ev->add_option(
        "--l2-fraction", e->predictor.l2_fraction,
        "Fraction of L2 one round's A and B panels may fill, for the model and default "
        "(default: fitted to the tuned shapes, for shapes within their sizes; the paper's 0.5 beyond "
        "them or without them)")
      ->check(real_range(0.0, std::numeric_limits<double>::max(), /*above_lo=*/true));
  ev->add_option("--tie-tolerance", e->predictor.tie_tolerance,
                 "A tuned shape (and the vote) answers (1,1) where (1,1) runs within this fraction of "
                 "its winner; 0: the winner")
      ->check(real_range(0.0, 0.5))
      ->capture_default_str();
  ev->add_option("--neighbours", e->predictor.vote_neighbours, "k of the k-neighbour vote")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  ev->add_option("--policy-rule", e->policy_rule,
                 "The policy's neighbour rule: nearest, vote, or auto (the better of the two on "
                 "the tuned shapes, leaving each out in turn)")
      ->check(CLI::IsMember({"nearest", "vote", "auto"}))
      ->capture_default_str();
  ev->add_option("--warmup", e->warmup, "Untimed runs before timing a configuration")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  ev->add_option("--reps", e->reps, "Timed runs per configuration timed")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  ev->add_flag("--json", e->json, "stdout is one JSON object (the readable lines go to stderr)");
  ev->add_option("--search", e->search,
                 "ranked (with --replay): replay the ranked search of `tune --search ranked` instead of "
                 "scoring the predictors")
      ->check(CLI::IsMember({"exhaustive", "ranked"}))
      ->capture_default_str();
  auto* replay = ev->add_option("--replay", e->replay,
                                "Exhaustively tuned database or table to replay the ranked search on: every "
                                "timing is a seeded draw from its stored times, nothing is timed");
  ev->add_option("--prior", e->prior,
                 "With --replay: a database or table (another machine's) to rank with too")
      ->needs(replay);
  ev->add_option("--replay-noise", e->replay_options.noise,
                 "With --replay: mean relative excess of a drawn run over the stored fastest")
      ->check(real_range(0.0, 10.0))
      ->capture_default_str();
  ev->add_option("--replay-outliers", e->replay_options.outlier_rate,
                 "With --replay: share of drawn runs that are slow outliers (20% to 100% over)")
      ->check(real_range(0.0, 1.0))
      ->capture_default_str();
  add_ranked_search_options(*ev, e->replay_options.ranking, e->replay_options.race, "With --replay");
  ev->add_flag("--no-model", e->no_model, "With --replay: rank without the analytical model");
  ev->add_flag("--per-shape", e->per_shape, "With --replay: a line per shape too");
  ev->callback([e, test_db, test_shapes, holdout, train_max, replay] {
    if (e->search == "ranked" || *replay) {
      if (e->search != "ranked" || !*replay)
        throw Error("replaying the ranked search needs both --search ranked and --replay DB");
      if (*test_db || *test_shapes || *holdout || *train_max)
        throw Error(
            "--replay replays a whole database: no --test-db, --test-shapes, --holdout or --train-max");
      return run_replay(*e);
    }
    if (!*test_db && !*test_shapes && !*holdout && !*train_max)
      throw Error("evaluate needs its test shapes: --test-db, --test-shapes, --holdout or --train-max");
    run_evaluate(*e);
  });
}

}  // namespace sfc::cli
