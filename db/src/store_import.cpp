// import_results: reads csv and json exports made with --all, and tuning tables.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "csv.hpp"
#include "exchange_records.hpp"
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/record_fields.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/text_file.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {
namespace {

using json = nlohmann::ordered_json;

// Everything a file holds, validated, before the store is touched.
struct ImportBatch {
  struct PlatformPart {
    Platform platform;
    std::optional<std::pair<Calibration, std::string>> calibration;
    std::vector<Measurement> measurements;
  };
  std::map<std::string, PlatformPart> platforms;  // by hash
};

std::optional<std::pair<Calibration, std::string>> calibration_from_json(const json& c) {
  if (c.is_null()) return std::nullopt;
  const auto number = [&](const char* key) {
    if (!c.contains(key) || !c[key].is_number())
      throw Error(std::string("calibration.") + key + ": not a number");
    return c[key].get<double>();
  };
  if (!c.contains("measured_at") || !c["measured_at"].is_string())
    throw Error("calibration.measured_at: not a string");
  const Calibration calibration{number("gamma_gflops_per_core"), number("beta_gbytes_per_s")};
  calibration.check();
  const std::string measured_at = c["measured_at"].get<std::string>();
  check_printable(measured_at);
  return std::pair{calibration, measured_at};
}

// The deepest nesting of arrays and objects in `text` (strings skipped): the
// parser recurses once per level, so a crafted file could exhaust the stack.
std::size_t nesting_depth(const std::string& text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// An export is four levels deep (document, platforms, platform, measurement).
constexpr std::size_t kMaxJsonDepth = 16;

ImportBatch read_json_document(const std::string& path, const json& document);

// The library's reason without its "[json.exception.parse_error.101] " code:
// what is wrong and where, on one line.
std::string json_reason(const json::exception& e) {
  std::string text = e.what();
  if (text.starts_with("[json.exception.") && text.find("] ") != std::string::npos)
    text.erase(0, text.find("] ") + 2);
  return text;
}

// Parses `text`, refusing a key given twice in one object: the parser would
// keep the last silently (a measurement changed by an edit nobody sees). CSV
// refuses a column named twice alike.
json parse_without_duplicate_keys(const std::string& path, const std::string& text) {
  std::vector<std::set<std::string>> open_objects;  // the keys seen so far, per enclosing object
  std::string duplicate;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open_objects.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_objects.empty() && !open_objects.back().insert(parsed.get<std::string>()).second &&
            duplicate.empty())
          duplicate = parsed.get<std::string>();
        break;
      default: break;
    }
    return true;
  };
  json document = json::parse(text, check);
  if (!duplicate.empty())
    throw Error(path + ": the key \"" + duplicate +
                "\" appears twice in one object (which one is meant?); keep one and import again");
  return document;
}

ImportBatch read_json(const std::string& path, const std::string& text) {
  if (nesting_depth(text) > kMaxJsonDepth)
    throw Error(path + ": not an sfc-tune export (nested deeper than " + std::to_string(kMaxJsonDepth) +
                " levels)");
  json document;
  try {
    document = parse_without_duplicate_keys(path, text);
  } catch (const json::exception& e) {  // syntax, or a number beyond double range
    throw Error(path + ": not valid JSON (" + json_reason(e) + ")");
  }
  try {
    return read_json_document(path, document);
  } catch (const json::exception& e) {  // a key of an unexpected type
    throw Error(path + ": not a valid sfc-tune export (" + json_reason(e) + ")");
  }
}

ImportBatch read_json_document(const std::string& path, const json& document) {
  if (!document.is_object())
    throw Error(path + ": not an sfc-tune export (a JSON " + std::string(document.type_name()) +
                ", where an export is an object with \"format\": \"sfc-tune-export\")");
  if (document.value("format", "") != "sfc-tune-export")
    throw Error(path + ": not an sfc-tune export (its \"format\" is not \"sfc-tune-export\")");
  // Version 3 added the platform's numa_nodes and its hardware-only hash;
  // version 2 each measurement's layout. Versions 1 and 2 are still read.
  const json version = document.value("version", json());
  if (version != 1 && version != 2 && version != 3)
    throw Error(path + ": export version " + version.dump() + " is not 1, 2 or 3");
  if (!document.value("measurements_included", false))
    throw Error(path + ": this export holds winners only; import needs one made with --all");
  if (!document.contains("platforms") || !document["platforms"].is_array())
    throw Error(path + ": \"platforms\" is missing");

  ImportBatch batch;
  std::size_t i = 0;
  for (const json& object : document["platforms"]) {
    std::string where = path + ": platforms[" + std::to_string(i++) + "]";
    try {
      if (!object.is_object()) throw Error("not an object");
      ImportBatch::PlatformPart part{
          .platform = platform_from_json(object),
          .calibration = calibration_from_json(object.value("calibration", json())),
          .measurements = {}};
      if (!object.contains("measurements") || !object["measurements"].is_array())
        throw Error("\"measurements\" is missing");
      std::size_t j = 0;
      for (const json& m : object["measurements"]) {
        where = path + ": platforms[" + std::to_string(i - 1) + "].measurements[" + std::to_string(j++) + "]";
        part.measurements.push_back(measurement_from_json(m));
      }
      const std::string hash = part.platform.hash();
      if (batch.platforms.count(hash)) throw Error("platform " + hash + " appears twice");
      batch.platforms.emplace(hash, std::move(part));
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
  }
  return batch;
}

ImportBatch read_csv(const std::string& path, const std::string& text) {
  CsvReader reader(text);
  std::vector<std::string> cells;
  std::map<std::string, std::size_t> column;
  try {
    if (!reader.next(cells)) throw Error("line 1: the file is empty");
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (!column.emplace(cells[i], i).second)  // which of two would be meant?
      throw Error(path + ":1: column '" + cells[i] + "' appears twice");
  const std::size_t width = cells.size();
  auto require = [&](const std::string& name) {
    const auto it = column.find(name);
    if (it != column.end()) return it->second;
    if (column.count("gflops") && !column.count("effective_k_layers"))
      throw Error(path + ":1: this CSV holds winners only; import needs an export made with --all");
    throw Error(path + ":1: not an sfc-tune measurement export (no column '" + name + "')");
  };
  // Where each platform and measurement key sits in a row.
  std::vector<std::pair<const PlatformField*, std::size_t>> platform_at;
  for (const PlatformField& f : platform_fields()) {
    const std::string name = "platform_" + std::string(f.name);
    if (f.added_with_hwloc && !column.count(name)) continue;  // an older export: 0
    platform_at.emplace_back(&f, require(name));
  }
  std::vector<std::pair<const RecordField<Measurement>*, std::size_t>> measurement_at;
  for (const RecordField<Measurement>& f : measurement_fields()) {
    if (f.optional && !column.count(std::string(f.name))) continue;  // version 1: every row blocked
    measurement_at.emplace_back(&f, require(std::string(f.name)));
  }
  const std::size_t hash_at = require("platform_hash"), gamma_at = require("gamma_gflops_per_core"),
                    beta_at = require("beta_gbytes_per_s"), calibrated_at = require("calibrated_at");

  // Every row repeats its platform's cells; the first row of a platform is
  // the one read, and every later one must agree with it.
  std::vector<std::size_t> platform_cells = {gamma_at, beta_at, calibrated_at};
  for (auto [f, at] : platform_at) platform_cells.push_back(at);
  std::map<std::string, std::vector<std::string>> first_row;  // by hash: its platform cells

  ImportBatch batch;
  for (;;) {
    std::string where = path;
    try {
      if (!reader.next(cells)) break;
      where = path + ":" + std::to_string(reader.line());
      if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
      if (cells.size() != width)
        throw Error(std::to_string(cells.size()) + " fields, the header has " + std::to_string(width));

      const std::string& hash = cells[hash_at];
      std::vector<std::string> platform_row;
      for (const std::size_t at : platform_cells) platform_row.push_back(cells[at]);
      const auto [first, new_platform] = first_row.emplace(hash, platform_row);
      if (!new_platform && first->second != platform_row) {
        std::size_t differs = 0;
        while (first->second[differs] == platform_row[differs]) ++differs;
        throw Error("column " + std::to_string(platform_cells[differs] + 1) + " of platform " + hash +
                    " differs from that platform's first row");
      }
      auto part = batch.platforms.find(hash);
      if (part == batch.platforms.end()) {
        json platform = {{"hash", hash}};
        for (auto [f, at] : platform_at)
          platform[std::string(f->name)] =
              cell_to_json("platform_" + std::string(f->name),
                           f->numeric ? FieldKind::integer : FieldKind::text, cells[at]);
        json calibration = nullptr;
        if (!cells[calibrated_at].empty())
          calibration = {
              {"gamma_gflops_per_core",
               cell_to_json("gamma_gflops_per_core", FieldKind::real, cells[gamma_at])},
              {"beta_gbytes_per_s", cell_to_json("beta_gbytes_per_s", FieldKind::real, cells[beta_at])},
              {"measured_at", cells[calibrated_at]}};
        part = batch.platforms
                   .emplace(hash, ImportBatch::PlatformPart{.platform = platform_from_json(platform),
                                                            .calibration = calibration_from_json(calibration),
                                                            .measurements = {}})
                   .first;
      }
      json measurement = json::object();
      bool empty = true;
      for (auto [f, at] : measurement_at) {
        measurement[std::string(f->name)] = cell_to_json(f->name, f->kind, cells[at]);
        empty = empty && cells[at].empty();
      }
      if (!empty) part->second.measurements.push_back(measurement_from_json(measurement));
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
  }
  return batch;
}

// A tuning table holds each configuration's fastest run and no time stamps:
// each time becomes one measurement of one run, stamped kTableTime -- older
// than anything measured, so a database's own calibration stays, and
// importing a table twice adds nothing. A time below the winner's (or equal,
// of a configuration that would win the tie) can only be a screen, which
// never wins, so it is imported as one: the winner stays the table's. The
// table does not say which blocks ran or how the plan clamped: the block
// rule's blocks here, knobs as requested.
constexpr const char* kTableTime = "1970-01-01T00:00:00.000000Z";

ImportBatch read_table(const std::string& path) {
  const TuningTable table = TuningTable::load(path);
  ImportBatch batch;
  ImportBatch::PlatformPart& part = batch.platforms[table.platform.hash()];
  part.platform = table.platform;
  if (table.calibration.gamma_gflops_per_core > 0 || table.calibration.beta_gbytes_per_s > 0)
    part.calibration = std::pair(table.calibration, std::string(kTableTime));
  for (const TunedShape& tuned : table.shapes) {
    const BlockSizes blocks = choose_blocks(tuned.shape, tuned.dtype, tuned.threads, tuned.layout);
    const int won = tuned.winner().index();
    const float winning = tuned.seconds[std::size_t(won)];
    for (int i = 0; i < kConfigCount; ++i) {
      const float seconds = tuned.seconds[std::size_t(i)];
      if (!(seconds > 0)) continue;  // not measured (NaN)
      const Knobs knobs = Knobs::at(i);
      part.measurements.push_back({.shape = tuned.shape,
                                   .dtype = tuned.dtype,
                                   .threads = tuned.threads,
                                   .layout = tuned.layout,
                                   .k_layers = knobs.k_layers,
                                   .k_block_factor = knobs.k_block_factor,
                                   .effective_k_layers = knobs.k_layers,
                                   .effective_k_block_factor = knobs.k_block_factor,
                                   .blocks = blocks,
                                   .warmup = 0,
                                   .reps = 1,
                                   .mean_s = seconds,
                                   .min_s = seconds,
                                   .stddev_s = 0,
                                   .screening = seconds < winning || (seconds == winning && i < won),
                                   .measured_at = kTableTime});
    }
  }
  return batch;
}

}  // namespace

namespace {

ImportBatch read_export(const std::string& path) {
  const std::string text = read_text_file(path);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw Error(path + " is empty");
  if (text.compare(first, 10, "sfc-table ") == 0) return read_table(path);
  // Any JSON value (an object, an array, a string) is read as JSON, so that
  // its refusal speaks of JSON, not of a CSV missing its columns.
  return text[first] == '{' || text[first] == '[' || text[first] == '"' ? read_json(path, text)
                                                                        : read_csv(path, text);
}

}  // namespace

ExchangeCounts check_import(const std::string& path) {
  const ImportBatch batch = read_export(path);
  ExchangeCounts counts;
  for (const auto& [key, part] : batch.platforms) {
    ++counts.platforms;
    counts.measurements += static_cast<std::int64_t>(part.measurements.size());
  }
  return counts;
}

ExchangeCounts import_results(TuningStore& store, const std::string& path) {
  const ImportBatch batch = read_export(path);

  ExchangeCounts counts;
  store.batch([&] {
    for (const auto& [key, part] : batch.platforms) {
      const std::string hash = part.platform.hash();  // a legacy record's key is its old hash
      store.upsert_platform(part.platform);
      if (part.calibration)
        keep_newer_calibration(store, hash, part.calibration->first, part.calibration->second);
      const std::int64_t added = store.record(hash, part.measurements);
      counts.measurements += added;
      counts.duplicates += static_cast<std::int64_t>(part.measurements.size()) - added;
      ++counts.platforms;
    }
  });
  return counts;
}

}  // namespace sfc
