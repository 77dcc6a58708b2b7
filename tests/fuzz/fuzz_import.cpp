// The CSV and JSON import readers on arbitrary bytes, then the round trip a
// user makes: what check_import() accepts must import into a fresh database,
// export again in every format (csv and json with every measurement, and a
// table per platform) and read back with the same counts. An accepted file
// that breaks a later command is the "accepted, then broken" class.
#include <filesystem>

#include "fuzz_input.hpp"
#include "sfc/error.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/tuning_store.hpp"

namespace {

std::string fresh_database() {
  const std::filesystem::path db = sfc::fuzz::scratch_dir() / "import.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  return db.string();
}

void check_counts(const sfc::ExchangeCounts& a, const sfc::ExchangeCounts& b, const char* what) {
  if (a.platforms != b.platforms || a.measurements != b.measurements)
    sfc::fuzz::broken(std::string(what) + ": counts changed by a round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = sfc::fuzz::write_input(data, size, "input.export");
  sfc::ExchangeCounts checked;
  try {
    checked = sfc::check_import(path);
  } catch (const sfc::Error&) {
    return 0;  // refused with a reason
  }
  try {
    sfc::TuningStore store(fresh_database(), sfc::TuningStore::Mode::create);
    const sfc::ExchangeCounts imported = sfc::import_results(store, path);
    if (imported.platforms != checked.platforms ||
        imported.measurements + imported.duplicates != checked.measurements)
      sfc::fuzz::broken("import added other counts than check_import promised");
    for (const sfc::ExportFormat format : {sfc::ExportFormat::csv, sfc::ExportFormat::json}) {
      const std::string out = (sfc::fuzz::scratch_dir() / "again.export").string();
      const sfc::ExchangeCounts exported = sfc::export_results(store, {format, out, "", true});
      check_counts(exported, sfc::check_import(out), format == sfc::ExportFormat::csv ? "csv" : "json");
    }
    for (const sfc::Platform& platform : store.platforms()) {
      const std::string out = (sfc::fuzz::scratch_dir() / "again.table").string();
      sfc::export_results(store, {sfc::ExportFormat::table, out, platform.hash(), false});
      sfc::TuningTable::load(out);
    }
  } catch (const sfc::Error& e) {
    sfc::fuzz::broken(std::string("an accepted export broke a later step: ") + e.what());
  }
  return 0;
}
