// Moving results in and out of a TuningStore: export to CSV, JSON or a
// tuning table; import of CSV and JSON exports; merging stores.
//
// Formats (columns and keys are documented in docs/tuning.md):
//   csv   one row per winner; with `all`, one row per measurement instead,
//         each carrying its platform and calibration, and a `winner` column
//   json  {"format": "sfc-tune-export", "version": 3, "platforms": [{...,
//         "calibration", "winners", and with `all` "measurements"}]}
//   table the TuningTable file of one platform (sfc/tuning_table.hpp)
// An export made with `all` imports back without loss; imports and merges
// skip measurements the store already holds, so repeating one adds nothing.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sfc/tuning_store.hpp"

namespace sfc {

enum class ExportFormat { csv, json, table };
ExportFormat parse_export_format(std::string_view text);  // "csv" | "json" | "table"; throws sfc::Error

struct ExportRequest {
  ExportFormat format = ExportFormat::csv;
  std::string path;           // written atomically (temporary file + rename)
  std::string platform_hash;  // empty: every platform (a table needs the store to hold just one)
  bool all = false;           // csv/json: every measurement too
  // Only this element type's results (a fleet that runs one deploys one),
  // only this entry layout's (one entry's shapes tuned again replace the old
  // ones: export the other layout, import it beside the new run); a selection
  // that holds nothing is refused rather than written as an empty file.
  std::optional<DType> dtype = std::nullopt;
  std::optional<Layout> layout = std::nullopt;
  bool wants(DType d, Layout l) const { return (!dtype || d == *dtype) && (!layout || l == *layout); }
};

struct ExchangeCounts {
  std::int64_t platforms = 0;
  std::int64_t winners = 0;
  std::int64_t measurements = 0;  // written, or added by an import/merge
  std::int64_t duplicates = 0;    // import/merge: already in the store, skipped
};

// Throws sfc::Error for a request a user made that asks for what its format
// cannot hold (--all with a table): the command refuses it rather than drop
// --all silently. export_results() itself writes a table's winners whatever `all` says.
void check_export_request(const ExportRequest& request);
ExchangeCounts export_results(const TuningStore& store, const ExportRequest& request);

// Drops the shapes `request` does not select (ExportRequest::wants) from
// `table`, read from `source`. Throws sfc::Error when none is left: an empty
// table would answer every query from the default tier.
void keep_selected(TuningTable& table, const ExportRequest& request, const std::string& source);

// Reads a csv or json export made with `all` (told apart by content) into
// `store` in one transaction. Throws sfc::Error naming the file, the line (csv)
// or the entry (json), and the reason; the store is then unchanged.
ExchangeCounts import_results(TuningStore& store, const std::string& path);

// Reads and validates an export as import_results() would, touching no store:
// what a caller runs before it creates or migrates the database to import
// into. Returns the platforms and measurements the file holds.
ExchangeCounts check_import(const std::string& path);

// Adds everything in `from` to `into` in one transaction: platforms stay
// apart by hash, every measurement is kept (so winners are recomputed over
// both runs), and the newer calibration of a platform wins.
ExchangeCounts merge_results(TuningStore& into, const TuningStore& from);
// Every store of `from` into `into` in one transaction: all of them land, or
// (any refused) nothing. `platforms` counts each input's platforms.
ExchangeCounts merge_results(TuningStore& into, std::span<const TuningStore> from);

// What a tuning database or an exported table holds (`sfc-tune db info`).
struct PlatformSummary {
  Platform platform;
  std::optional<Calibration> calibration;    // none stored
  std::optional<std::string> calibrated_at;  // when the database knows it (tables do not)
  // Per dtype, thread count and layout: shapes measured, shapes with a winner
  // and measurements (-1 for a table, which holds winners only).
  std::vector<ResultGroup> results;
};
struct SourceSummary {
  std::string path;
  std::optional<int> schema_version;  // a database's; none for a table
  std::vector<PlatformSummary> platforms;
};

// Read in one snapshot of the database.
SourceSummary summarize_store(const TuningStore& store);
SourceSummary summarize_table(const TuningTable& table, const std::string& path);

// `db info --json`'s document: "db", "schema_version" or "format": "table",
// and per platform its fields and hash, "calibration" (or null) and "results"
// ("measurements" null for a table).
nlohmann::ordered_json to_json(const SourceSummary& summary);

}  // namespace sfc
