// `sfc-tune record show`: what a shape record (SFC_RECORD=FILE) says a program
// ran, ranked by each shape's share of the estimated GEMM time, with the tier
// each got -- the list `tune --from-record` works down.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "sfc/platform.hpp"
#include "sfc/record_ranking.hpp"
#include "sfc/shape_record.hpp"
#include "sfc/tuning_source.hpp"

namespace sfc::cli {
namespace {

struct ShowArgs {
  std::string file, db;
  int top = 0;
  bool json = false;
};

void run_show(const ShowArgs& a) {
  std::FILE* const out = human_output(a.json);
  const ShapeRecord record = ShapeRecord::load(a.file);
  // A tuning database or table of this machine calibrates the model; else the nominal numbers.
  const std::vector<TuningTable> tables =
      a.db.empty() ? std::vector<TuningTable>{} : load_tuning_tables(a.db);
  const RecordRanking ranking = rank_record(record, tables, detect_platform());

  bool calibrated = !ranking.shapes.empty();
  for (const RankedShape& r : ranking.shapes) calibrated = calibrated && r.calibrated;
  std::fprintf(out, "%s: %zu shapes, %llu calls, %s of GEMM time estimated by the %s model\n", a.file.c_str(),
               ranking.shapes.size(), static_cast<unsigned long long>(record.total_calls()),
               format_seconds(ranking.total_seconds).c_str(),
               calibrated ? "calibrated" : "nominal (pass --db for this machine's calibration)");
  std::fprintf(out, "%7s %10s %11s  %-22s %-5s %7s %-7s %-5s %-8s %s\n", "share", "calls", "per call",
               "shape", "dtype", "threads", "layout", "trans", "tier", "distance");
  json shapes = json::array();
  std::size_t shown = 0;
  for (const RankedShape& r : ranking.shapes) {
    if (a.top > 0 && shown == std::size_t(a.top)) break;
    ++shown;
    const RecordKey& k = r.recorded.key;
    const std::string trans = std::string(to_string(k.trans_a)) + std::string(to_string(k.trans_b));
    const bool far = !std::isfinite(r.recorded.distance);
    std::fprintf(out, "%6.2f%% %10llu %11s  %-22s %-5s %7d %-7s %-5s %-8s %s\n", 100 * r.share,
                 static_cast<unsigned long long>(r.recorded.calls),
                 format_seconds(r.seconds_per_call).c_str(), to_string(k.shape()).c_str(),
                 std::string(to_string(k.dtype)).c_str(), k.threads, std::string(to_string(k.layout)).c_str(),
                 trans.c_str(), std::string(to_string(r.recorded.tier)).c_str(),
                 far ? "none tuned" : std::to_string(r.recorded.distance).substr(0, 5).c_str());
    shapes.push_back({{"m", k.m},
                      {"n", k.n},
                      {"k", k.k},
                      {"dtype", to_string(k.dtype)},
                      {"threads", k.threads},
                      {"layout", to_string(k.layout)},
                      {"trans_a", to_string(k.trans_a)},
                      {"trans_b", to_string(k.trans_b)},
                      {"calls", r.recorded.calls},
                      {"tier", to_string(r.recorded.tier)},
                      {"distance", far ? json(nullptr) : json(r.recorded.distance)},
                      {"seconds_per_call", r.seconds_per_call},
                      {"share", r.share}});
  }
  if (a.json)
    print_json({{"command", "record show"},
                {"file", a.file},
                {"shapes", ranking.shapes.size()},
                {"calls", record.total_calls()},
                {"estimated_seconds", ranking.total_seconds},
                {"calibrated", calibrated},
                {"ranking", shapes}});
}

}  // namespace

void add_record_commands(CLI::App& app) {
  CLI::App* record = app.add_subcommand("record", "Read the shape records that SFC_RECORD=FILE writes");
  record->require_subcommand(1);
  auto s = std::make_shared<ShowArgs>();
  CLI::App* show = record->add_subcommand(
      "show",
      "The recorded shapes by share of the estimated GEMM time (calls x the model's time), with their tier");
  show->add_option("FILE", s->file, "Shape record (SFC_RECORD=FILE or sfcconf_record_open wrote it)")
      ->required();
  show->add_option("--db", s->db,
                   "Tuning database or table whose calibration the model uses (default: nominal)");
  show->add_option("--top", s->top, "Only the N largest shares")->check(CLI::PositiveNumber);
  show->add_flag("--json", s->json, "stdout is one JSON object (the readable lines go to stderr)");
  show->callback([s] { run_show(*s); });
}

}  // namespace sfc::cli
