// export_results: csv, json and table writers.
#include <map>
#include <set>
#include <tuple>

#include "csv.hpp"
#include "exchange_records.hpp"
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/text_file.hpp"

namespace sfc {
namespace {

using json = nlohmann::ordered_json;

std::vector<std::string> selected_platforms(const TuningStore& store, const std::string& hash) {
  std::vector<std::string> hashes;
  if (!hash.empty()) {
    if (!store.platform(hash))
      throw Error("database " + store.path() + " has no platform " + hash + " (sfc-tune db info lists them)");
    hashes.push_back(hash);
    return hashes;
  }
  for (const Platform& p : store.platforms()) hashes.push_back(p.hash());
  return hashes;
}

json calibration_json(const TuningStore& store, const std::string& hash) {
  const std::optional<std::string> at = store.calibration_time(hash);
  if (!at) return nullptr;
  const Calibration c = store.calibration(hash);
  return {{"gamma_gflops_per_core", c.gamma_gflops_per_core},
          {"beta_gbytes_per_s", c.beta_gbytes_per_s},
          {"measured_at", *at}};
}

// One JSON object per platform: fingerprint, calibration, winners [, measurements].
json platform_json(const TuningStore& store, const std::string& hash, const ExportRequest& request,
                   ExchangeCounts& counts) {
  json object = to_json(*store.platform(hash));
  object["calibration"] = calibration_json(store, hash);
  object["winners"] = json::array();
  for (const Winner& w : store.winners({hash}))
    if (request.wants(w.dtype, w.layout)) object["winners"].push_back(to_json(w));
  counts.winners += static_cast<std::int64_t>(object["winners"].size());
  if (request.all) {
    object["measurements"] = json::array();
    for (const Measurement& m : store.measurements({hash}))
      if (request.wants(m.dtype, m.layout)) object["measurements"].push_back(to_json(m));
    counts.measurements += static_cast<std::int64_t>(object["measurements"].size());
  }
  ++counts.platforms;
  return object;
}

// "bf16 row-major": what a request selects, for the error that it selects nothing.
Error no_results_of(const std::string& path, const ExportRequest& request) {
  std::string what;
  if (request.dtype) what += std::string(to_string(*request.dtype)) + " ";
  if (request.layout)
    what += std::string(to_string(*request.layout)) + (*request.layout == Layout::blocked ? " " : "-major ");
  return Error(path + " holds no " + what + "results to export");
}

// CSV columns that name the platform and its calibration on every row.
std::vector<std::string> platform_columns() {
  std::vector<std::string> columns = {"platform_hash"};
  for (const PlatformField& f : platform_fields()) columns.push_back("platform_" + std::string(f.name));
  for (const char* c : {"gamma_gflops_per_core", "beta_gbytes_per_s", "calibrated_at"}) columns.push_back(c);
  return columns;
}

std::vector<std::string> platform_cells(const json& platform) {
  std::vector<std::string> cells = {platform["hash"].get<std::string>()};
  for (const PlatformField& f : platform_fields())
    cells.push_back(json_to_cell(platform[std::string(f.name)]));
  const json& c = platform["calibration"];
  for (const char* key : {"gamma_gflops_per_core", "beta_gbytes_per_s", "measured_at"})
    cells.push_back(c.is_null() ? "" : json_to_cell(c[key]));
  return cells;
}

// A configuration of a shape, from a winner or a measurement object.
using ConfigKey =
    std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string, int, std::string, int, int>;
ConfigKey config_key(const json& o) {
  return {o["m"].get<std::int64_t>(),    o["n"].get<std::int64_t>(),    o["k"].get<std::int64_t>(),
          o["dtype"].get<std::string>(), o["threads"].get<int>(),       o["layout"].get<std::string>(),
          o["k_layers"].get<int>(),      o["k_block_factor"].get<int>()};
}

std::string csv_text(const json& platforms, bool all) {
  std::vector<std::string> header = platform_columns();
  if (all)
    for (const auto& f : measurement_fields()) header.emplace_back(f.name);
  else
    for (const auto& f : winner_fields()) header.emplace_back(f.name);
  if (all) header.emplace_back("winner");
  std::string out;
  append_csv_row(out, header);

  for (const json& platform : platforms) {
    const std::vector<std::string> prefix = platform_cells(platform);
    if (!all) {
      for (const json& w : platform["winners"]) {
        std::vector<std::string> row = prefix;
        for (const auto& f : winner_fields()) row.push_back(json_to_cell(w[std::string(f.name)]));
        append_csv_row(out, row);
      }
      continue;
    }
    // Full measurements of the winning configuration of their shape get winner = 1.
    std::set<ConfigKey> winning;
    for (const json& w : platform["winners"]) winning.insert(config_key(w));
    if (platform["measurements"].empty()) {  // a row still carries the platform (e.g. calibrated, not tuned)
      std::vector<std::string> row = prefix;
      row.resize(header.size());
      append_csv_row(out, row);
    }
    for (const json& m : platform["measurements"]) {
      std::vector<std::string> row = prefix;
      for (const auto& f : measurement_fields()) row.push_back(json_to_cell(m[std::string(f.name)]));
      const bool wins = m["screening"] == 0 && winning.count(config_key(m));
      row.push_back(wins ? "1" : "0");
      append_csv_row(out, row);
    }
  }
  return out;
}

}  // namespace

SourceSummary summarize_store(const TuningStore& store) {
  return store.snapshot([&] {
    SourceSummary summary{.path = store.path(), .schema_version = store.schema_version(), .platforms = {}};
    for (const Platform& platform : store.platforms()) {
      const std::string hash = platform.hash();
      PlatformSummary p{.platform = platform,
                        .calibration = std::nullopt,
                        .calibrated_at = store.calibration_time(hash),
                        .results = store.result_groups(hash)};
      if (p.calibrated_at) p.calibration = store.calibration(hash);
      summary.platforms.push_back(std::move(p));
    }
    return summary;
  });
}

SourceSummary summarize_table(const TuningTable& table, const std::string& path) {
  PlatformSummary p{
      .platform = table.platform, .calibration = std::nullopt, .calibrated_at = std::nullopt, .results = {}};
  const Calibration& c = table.calibration;
  if (c.gamma_gflops_per_core > 0 || c.beta_gbytes_per_s > 0) p.calibration = c;
  std::map<std::tuple<DType, int, Layout>, std::int64_t> groups;
  for (const TunedShape& s : table.shapes) ++groups[{s.dtype, s.threads, s.layout}];
  for (const auto& [key, shapes] : groups)
    p.results.push_back({.dtype = std::get<0>(key),
                         .threads = std::get<1>(key),
                         .layout = std::get<2>(key),
                         .shapes = shapes,
                         .tuned_shapes = shapes,
                         .measurements = -1});
  return {.path = path, .schema_version = std::nullopt, .platforms = {std::move(p)}};
}

json to_json(const SourceSummary& summary) {
  json platforms = json::array();
  for (const PlatformSummary& p : summary.platforms) {
    json object = to_json(p.platform);
    object["calibration"] = nullptr;
    if (p.calibration)
      object["calibration"] = {{"gamma_gflops_per_core", p.calibration->gamma_gflops_per_core},
                               {"beta_gbytes_per_s", p.calibration->beta_gbytes_per_s},
                               {"measured_at", p.calibrated_at ? json(*p.calibrated_at) : json(nullptr)}};
    object["results"] = json::array();
    for (const ResultGroup& g : p.results)
      object["results"].push_back(
          {{"dtype", std::string(to_string(g.dtype))},
           {"threads", g.threads},
           {"layout", std::string(to_string(g.layout))},
           {"shapes", g.shapes},
           {"tuned_shapes", g.tuned_shapes},
           {"measurements", g.measurements < 0 ? json(nullptr) : json(g.measurements)}});
    platforms.push_back(std::move(object));
  }
  json document = {{"db", summary.path}};
  if (summary.schema_version)
    document["schema_version"] = *summary.schema_version;
  else
    document["format"] = "table";
  document["platforms"] = std::move(platforms);
  return document;
}

ExportFormat parse_export_format(std::string_view text) {
  if (text == "csv") return ExportFormat::csv;
  if (text == "json") return ExportFormat::json;
  if (text == "table") return ExportFormat::table;
  throw Error("unknown export format '" + std::string(text) + "' (use csv, json or table)");
}

namespace {

// export_results in the caller's snapshot.
ExchangeCounts export_snapshot(const TuningStore& store, const ExportRequest& request) {
  ExchangeCounts counts;
  const std::vector<std::string> hashes = selected_platforms(store, request.platform_hash);

  if (request.format == ExportFormat::table) {
    if (hashes.empty()) throw Error(store.path() + " holds no platform to write a table of");
    if (hashes.size() != 1) {
      std::string list;
      for (const std::string& h : hashes) list += " " + h;
      throw Error("a table holds one platform, and " + store.path() + " has " +
                  std::to_string(hashes.size()) + ":" + list + "; choose one with --platform HASH");
    }
    TuningTable table = store.table(hashes.front());
    keep_selected(table, request, store.path());
    table.save(request.path);
    counts.platforms = 1;
    counts.winners = static_cast<std::int64_t>(table.shapes.size());
    return counts;
  }

  json platforms = json::array();
  for (const std::string& hash : hashes) platforms.push_back(platform_json(store, hash, request, counts));
  if ((request.dtype || request.layout) && counts.winners == 0) throw no_results_of(store.path(), request);
  if (request.format == ExportFormat::json) {
    const json document = {{"format", "sfc-tune-export"},
                           {"version", 3},
                           {"measurements_included", request.all},
                           {"platforms", std::move(platforms)}};
    write_text_file_atomically(request.path, document.dump(1) + "\n");
  } else {
    write_text_file_atomically(request.path, csv_text(platforms, request.all));
  }
  return counts;
}

}  // namespace

void keep_selected(TuningTable& table, const ExportRequest& request, const std::string& source) {
  if (!request.dtype && !request.layout) return;
  std::erase_if(table.shapes, [&](const TunedShape& s) { return !request.wants(s.dtype, s.layout); });
  if (table.shapes.empty()) throw no_results_of(source, request);
}

void check_export_request(const ExportRequest& request) {
  if (request.all && request.format == ExportFormat::table)
    throw Error(
        "export: a table holds winners only, so --all (every measurement) needs --format csv or json");
}

ExchangeCounts export_results(const TuningStore& store, const ExportRequest& request) {
  return store.snapshot([&] { return export_snapshot(store, request); });
}

}  // namespace sfc
