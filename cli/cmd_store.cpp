// The commands that move and show what a tuning database holds: `export`,
// `import`, `merge` and `db info`. The work happens in sfc_db (sfc/store_exchange.hpp);
// this file maps flags onto it and prints results.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/platform.hpp"
#include "sfc/settings.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/tuning_source.hpp"
#include "sfc/tuning_store.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc::cli {
namespace {

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
  std::string db = kDefaultDb, format = "csv", output, platform, dtype, layout;
  bool all = false, json = false;
};

// A tuning table read and written again: how a table of an older version
// (or an older platform hash) becomes a current one.
ExchangeCounts rewrite_table(const ExportArgs& a, const ExportRequest& request) {
  if (request.format != ExportFormat::table)
    throw Error(a.db +
                " is a tuning table, which holds winners only: it can be written again as a table "
                "(--format table); csv and json exports come from a database");
  TuningTable table = TuningTable::load(a.db);
  if (!a.platform.empty() && a.platform != table.platform.hash())
    throw Error(a.db + " holds platform " + table.platform.hash() + ", not " + a.platform);
  keep_selected(table, request, a.db);
  table.save(request.path);
  return {.platforms = 1, .winners = static_cast<std::int64_t>(table.shapes.size())};
}

void run_export(const ExportArgs& a) {
  if (a.output == "-" && a.json)
    throw Error(
        "export: -o - writes the export to stdout, which --json needs for its summary; use one of them");
  std::FILE* const out = human_output(a.json || a.output == "-");  // stdout holds the export itself
  const ExportRequest request{
      .format = parse_export_format(a.format),
      .path = a.output,
      .platform_hash = a.platform,
      .all = a.all,
      .dtype = a.dtype.empty() ? std::nullopt : std::optional(parse_dtype(a.dtype)),
      .layout = a.layout.empty() ? std::nullopt : std::optional(parse_layout(a.layout))};
  check_export_request(request);
  const bool table = is_table_file(a.db);
  if (!table) refuse_database_file_as_output(a.output, a.db, "export");
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
  for (const std::string& input : a.inputs) {
    if (fs::exists(a.output, error) && fs::equivalent(input, a.output, error))
      throw Error("merge: the output " + a.output + " is also an input");
    refuse_database_file_as_output(a.output, input, "merge");
  }
  // Open (and so check) every input before the output is created or touched;
  // a tuning table (a shipped one, extended with shapes tuned here) is read
  // as `import` reads it.
  std::vector<TuningStore> inputs;
  std::vector<std::string> tables;
  for (const std::string& input : a.inputs) {
    if (is_table_file(input)) {
      check_import(input);
      tables.push_back(input);
    } else {
      inputs.emplace_back(input, TuningStore::Mode::read_only);
    }
  }
  TuningStore output(a.output, TuningStore::Mode::create);
  ExchangeCounts total = merge_results(output, inputs);
  for (const std::string& table : tables) {
    const ExchangeCounts counts = import_results(output, table);
    total.measurements += counts.measurements;
    total.duplicates += counts.duplicates;
  }
  total.platforms = static_cast<std::int64_t>(output.platforms().size());
  std::fprintf(out,
               "%s: %lld measurements merged from %zu input(s) (%lld already present); %lld platform(s)\n",
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

// A cache size in KiB, or "unknown" for a record made before hwloc (NUMA nodes 0).
std::string kib(std::size_t bytes, const Platform& p) {
  if (bytes == 0 && p.numa_nodes == 0) return "unknown";
  return std::to_string(bytes / 1024) + " KiB";
}

// A folder of tables (what SFC_TUNING may name): one line per table, with
// its match on this machine and the (dtype, threads) it would serve.
void run_folder_info(const InfoArgs& a) {
  std::FILE* const out = human_output(a.json);
  const std::vector<FolderTable> tables =
      survey_tuning_folder(a.db, PlatformChoice::parse_or_environment(""));
  std::fprintf(out, "%s: folder of %zu tuning table(s) and database platform(s); this machine is %s\n",
               a.db.c_str(), tables.size(), describe(detect_platform()).c_str());
  json document = {{"command", "db info"}, {"folder", a.db}, {"tables", json::array()}};
  for (const FolderTable& t : tables) {
    const std::string name = std::filesystem::path(t.file).filename().string();
    json entry = {{"file", t.file}, {"chosen_for", t.chosen_for}};
    if (!t.platform) {
      std::fprintf(out, "  %s: unusable: %s\n", name.c_str(), t.problem.c_str());
      entry["problem"] = t.problem;
      document["tables"].push_back(entry);
      continue;
    }
    std::string dtypes;
    for (DType d : t.dtypes) dtypes += (dtypes.empty() ? "" : ",") + std::string(to_string(d));
    std::string chosen;
    for (const std::string& key : t.chosen_for) chosen += (chosen.empty() ? "" : ", ") + key;
    std::fprintf(out, "  %s: %s, %s, %zu shapes%s; on this machine: %s; %s\n", name.c_str(),
                 describe(*t.platform).c_str(), dtypes.c_str(), t.shapes, t.reduced ? " (reduced)" : "",
                 std::string(to_string(*t.match)).c_str(),
                 chosen.empty() ? "not chosen" : ("chosen for " + chosen).c_str());
    entry.update({{"platform", t.platform->hash()},
                  {"threads", t.platform->threads},
                  {"match", std::string(to_string(*t.match))},
                  {"dtypes", dtypes},
                  {"shapes", t.shapes},
                  {"reduced", t.reduced}});
    document["tables"].push_back(entry);
  }
  if (a.json) print_json(document);
}

void run_info(const InfoArgs& a) {
  std::error_code error;
  if (std::filesystem::is_directory(a.db, error)) return run_folder_info(a);
  std::FILE* const out = human_output(a.json);
  // A database, or an exported tuning table (what a fleet is deployed with);
  // anything else is opened as a database, whose refusal says what it is.
  if (!std::filesystem::exists(a.db, error)) throw Error("no tuning database or table at " + a.db);
  SourceSummary summary;
  if (!is_table_file(a.db)) {
    summary = summarize_store(TuningStore(a.db, TuningStore::Mode::read_only));
    std::fprintf(out, "%s: tuning database, schema version %d, %zu platform(s)\n", a.db.c_str(),
                 *summary.schema_version, summary.platforms.size());
  } else {
    const TuningTable table = TuningTable::load(a.db);
    summary = summarize_table(table, a.db);
    std::fprintf(out, "%s: tuning table of %zu shapes\n", a.db.c_str(), table.shapes.size());
  }
  const Platform here = detect_platform();
  json document = to_json(summary);
  for (std::size_t i = 0; i < summary.platforms.size(); ++i) {
    const PlatformSummary& s = summary.platforms[i];
    const Platform& p = s.platform;
    std::fprintf(out,
                 "platform %s: %s, %d cores, %d threads, L1d %s, L2 %s, L3 %s, NUMA nodes %s, isa %s, "
                 "LIBXSMM %s, %s\n",
                 p.hash().c_str(), p.cpu_model.c_str(), p.cores, p.threads, kib(p.l1d_bytes, p).c_str(),
                 kib(p.l2_bytes, p).c_str(), kib(p.l3_bytes, p).c_str(),
                 p.numa_nodes > 0 ? std::to_string(p.numa_nodes).c_str() : "unknown", p.isa.c_str(),
                 p.libxsmm_version.c_str(), p.compiler.c_str());
    const PlatformComparison match = compare_platforms(p, here);
    std::fprintf(out, "  on this machine: %s%s%s\n", std::string(to_string(match.match)).c_str(),
                 match.differences.empty() ? "" : " -- ", match.describe().c_str());
    document["platforms"][i]["match"] = {{"platform", std::string(to_string(match.match))},
                                         {"differences", match.differences}};
    if (s.calibration)
      std::fprintf(out, "  calibration: gamma %.1f GFLOP/s per core, beta %.1f GB/s%s\n",
                   s.calibration->gamma_gflops_per_core, s.calibration->beta_gbytes_per_s,
                   s.calibrated_at ? (" (" + *s.calibrated_at + ")").c_str() : "");
    for (const ResultGroup& r : s.results) {
      std::fprintf(out, "  %s, %d threads, %s layout: %lld shapes (%lld with a winner)",
                   std::string(to_string(r.dtype)).c_str(), r.threads,
                   std::string(to_string(r.layout)).c_str(), static_cast<long long>(r.shapes),
                   static_cast<long long>(r.tuned_shapes));
      if (r.measurements >= 0)
        std::fprintf(out, ", %lld measurements", static_cast<long long>(r.measurements));
      std::fprintf(out, "\n");
    }
  }
  if (a.json) {
    document["command"] = "db info";
    print_json(document);
  }
}

// `db tables`: what sfc::gemm would read -- SFC_TUNING, else the installed
// tables -- or the folder named, listed as `db info` lists a folder.
void run_tables(InfoArgs a, bool named) {
  if (!named) {
    if (const std::optional<std::string> tuning = sfc::setting_text("SFC_TUNING")) {
      a.db = *tuning;
    } else if (const std::optional<std::string> installed = installed_tuning_folder()) {
      a.db = *installed;
    } else {
      throw Error(
          "db tables: SFC_TUNING is unset and no tables are installed beside this program "
          "(<prefix>/share/sfc-tune/tables); name a folder with --db, e.g. data/tables in a checkout");
    }
  }
  run_info(a);
}

}  // namespace

void add_store_commands(CLI::App& app) {
  auto e = std::make_shared<ExportArgs>();
  CLI::App* exp =
      app.add_subcommand("export", "Write the winners (and with --all every measurement) to a file");
  exp->add_option("--db", e->db, "Tuning database, or a tuning table to write again as a current one")
      ->capture_default_str();
  exp->add_option("--format", e->format, "csv, json, or table (the file libsfcconf loads)")
      ->capture_default_str();
  exp->add_option("-o,--output", e->output, "Output file (written atomically), or - for stdout")->required();
  exp->add_option("--platform", e->platform, "Only this platform hash (sfc-tune db info lists them)");
  exp->add_option("--dtype", e->dtype, "Only this element type's results: f32, f64 or bf16 (default: all)")
      ->check(CLI::IsMember({"f32", "f64", "bf16"}));
  exp->add_option("--layout", e->layout,
                  "Only this entry layout's results: blocked, row or col (default: all); with --all, how one "
                  "entry's shapes tuned again replace the old ones (export the other entry, import it beside "
                  "the new run)")
      ->check(CLI::IsMember({"blocked", "row", "col"}));
  exp->add_flag("--all", e->all, "Every measurement too (csv/json); such a file imports back without loss");
  exp->add_flag("--json", e->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  exp->callback([e] { run_export(*e); });

  auto i = std::make_shared<ImportArgs>();
  CLI::App* imp = app.add_subcommand(
      "import", "Read a csv or json export made with --all, or a tuning table, into a database");
  imp->add_option("FILE", i->file, "The export or tuning table to read")->required();
  imp->add_option("--db", i->db, "Tuning database (created if absent)")->capture_default_str();
  imp->add_flag("--json", i->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  imp->callback([i] { run_import(*i); });

  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge = app.add_subcommand(
      "merge", "Join databases (runs, shards, machines): every measurement is kept, winners are recomputed");
  merge->add_option("INPUTS", m->inputs, "Databases (or tuning tables) to merge")->required();
  merge->add_option("-o,--output", m->output, "Database to merge into (created if absent)")->required();
  merge->add_flag("--json", m->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  merge->callback([m] { run_merge(*m); });

  CLI::App* db = app.add_subcommand("db", "Inspect a tuning database");
  db->require_subcommand(1);
  auto n = std::make_shared<InfoArgs>();
  CLI::App* info = db->add_subcommand(
      "info", "List platforms (and how each matches this machine), dtypes, thread counts and shape counts");
  info->add_option("--db", n->db,
                   "Tuning database, exported tuning table, or a folder of them (each listed with its match "
                   "and what it would serve)")
      ->capture_default_str();
  info->add_flag("--json", n->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  info->callback([n] { run_info(*n); });
  auto t = std::make_shared<InfoArgs>();
  CLI::App* tables = db->add_subcommand(
      "tables",
      "List the tables sfc::gemm reads (SFC_TUNING, else <prefix>/share/sfc-tune/tables) or a named folder, "
      "each with its match on this machine and the dtype and threads it would serve");
  CLI::Option* tables_db = tables->add_option(
      "--db", t->db, "A folder of tables, a table or a database (default: as sfc::gemm finds them)");
  tables->add_flag("--json", t->json, "stdout is one JSON summary object (the readable lines go to stderr)");
  tables->callback([t, tables_db] { run_tables(*t, tables_db->count() > 0); });
}

}  // namespace sfc::cli
