#include "sfc/tuning_store.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <variant>

#include "schema.hpp"
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/record_fields.hpp"
#include "sqlite.hpp"
#include "store_impl.hpp"

namespace sfc {
namespace {

// "cpu_model, cores, ...": the platforms columns in platform_fields() order.
std::string platform_columns() {
  std::string columns;
  for (const PlatformField& field : platform_fields()) {
    if (!columns.empty()) columns += ", ";
    columns += field.name;
  }
  return columns;
}

// Reads platform_fields() from `first` on, as the query selected them.
Platform read_platform(const sqlite::Statement& row, int first) {
  Platform platform;
  int column = first;
  for (const PlatformField& field : platform_fields()) field.set(platform, row.text(column++));
  return platform;
}

bool is_shape_column(std::string_view name) { return name == "m" || name == "n" || name == "k"; }

// "s.m, s.n, s.k, r.dtype, ...": a record's stored fields, in its field table's
// order, the shape's from `shapes` and the rest from `results`.
template <class Record>
std::string record_columns(std::span<const RecordField<Record>> fields, const std::string& results,
                           const std::string& shapes) {
  std::string columns;
  for (const RecordField<Record>& f : fields) {
    if (f.derived) continue;
    if (!columns.empty()) columns += ", ";
    columns += (is_shape_column(f.name) ? shapes : results) + "." + std::string(f.name);
  }
  return columns;
}

// A row selected with record_columns(), checked as every reader checks it: a
// database whose CHECK constraints were bypassed is refused, not misread.
template <class Record>
Record read_record(const sqlite::Statement& row, std::span<const RecordField<Record>> fields,
                   const std::string& path) {
  Record record;
  int column = 0;
  for (const RecordField<Record>& f : fields) {
    if (f.derived) continue;
    FieldValue value;
    switch (f.kind) {
      case FieldKind::integer: value = row.integer(column); break;
      case FieldKind::real: value = row.real(column); break;
      case FieldKind::text: value = row.text(column); break;
    }
    ++column;
    try {
      f.set(record, value);
    } catch (const Error& e) {
      throw Error("database " + path + " is inconsistent: " + std::string(f.name) + ": " + e.what());
    }
  }
  return record;
}

const std::string& measurement_select() {
  static const std::string select = "SELECT " + record_columns(measurement_fields(), "r", "s") +
                                    " FROM measurements AS r JOIN shapes AS s ON s.id = r.shape_id "
                                    "JOIN platforms AS p ON p.id = r.platform_id WHERE p.hash = ?1";
  return select;
}
constexpr const char* kMeasurementOrder =
    " ORDER BY s.m, s.n, s.k, r.dtype, r.threads, r.layout, r.k_layers, r.k_block_factor, r.screening, "
    "r.measured_at";

const std::string& winner_select() {
  static const std::string select =
      "SELECT " + record_columns(winner_fields(), "w", "w") + " FROM winners AS w WHERE w.platform_hash = ?1";
  return select;
}
constexpr const char* kWinnerOrder = " ORDER BY w.m, w.n, w.k, w.dtype, w.threads, w.layout";

// INSERT of one measurement: the platform and shape ids (?1, ?2), then every
// field but the shape's, in field-table order (?3 on).
const std::string& measurement_insert() {
  static const std::string insert = [] {
    std::string columns = "platform_id, shape_id", values = "?1, ?2";
    int index = 3;
    for (const RecordField<Measurement>& f : measurement_fields()) {
      if (is_shape_column(f.name)) continue;
      columns += ", " + std::string(f.name);
      values += ", ?" + std::to_string(index++);
    }
    return "INSERT INTO measurements (" + columns + ") VALUES (" + values + ") ON CONFLICT DO NOTHING";
  }();
  return insert;
}

void bind_measurement(sqlite::Statement& insert, const Measurement& m) {
  int index = 3;
  for (const RecordField<Measurement>& f : measurement_fields()) {
    if (is_shape_column(f.name)) continue;
    std::visit([&](const auto& value) { insert.bind(index, value); }, f.get(m));
    ++index;
  }
}

}  // namespace

bool has_sqlite_header(const std::string& path) {
  static constexpr char header[] = "SQLite format 3";  // with its NUL: 16 bytes
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) return false;  // a pipe would block
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return false;
  char head[sizeof header] = {};
  const std::size_t read = std::fread(head, 1, sizeof head, file);
  std::fclose(file);
  return read == sizeof head && std::memcmp(head, header, sizeof head) == 0;
}

void refuse_database_file_as_output(const std::string& output, const std::string& database,
                                    const std::string& option) {
  namespace fs = std::filesystem;
  static constexpr std::pair<const char*, const char*> kFiles[] = {
      {"", "the database"},
      {"-wal", "the write-ahead log (holding its latest commits)"},
      {"-shm", "the shared-memory index"},
      {"-journal", "the rollback journal"},
      {"-claims", "the tuners' claims file"}};
  if (output.empty() || output == "-") return;
  // A companion file of any database, named or not in the command: SQLite
  // would take what is written there for that database's own.
  for (const auto& [suffix, which] : kFiles)
    if (*suffix && output.ends_with(suffix) &&
        has_sqlite_header(output.substr(0, output.size() - std::strlen(suffix))))
      throw Error(option + ": the output " + output + " is " + which + " of the database " +
                  output.substr(0, output.size() - std::strlen(suffix)) + "; choose another file");
  if (database.empty()) return;
  std::error_code error;
  const fs::path out = fs::weakly_canonical(output, error);
  for (const auto& [suffix, which] : kFiles) {
    const std::string file = database + suffix;
    std::error_code ignored;
    // The same name (even when the file is absent now: SQLite would take it
    // for its own), or another name of the same file (a link).
    const bool same =
        (!error && out == fs::weakly_canonical(file, ignored) && !ignored) ||
        (fs::exists(output, ignored) && fs::exists(file, ignored) && fs::equivalent(output, file, ignored));
    if (same)
      throw Error(option + ": the output " + output + " is " + which + " " +
                  (*suffix ? "of the database " + database + " (" + file + ")" : database + " itself") +
                  "; choose another file");
  }
}

namespace {

// The SQL that narrows a select (whose platform is ?1) to `filter`: results
// columns under the alias `results`, shape columns under `shapes`. Each
// condition has a fixed parameter number, so bind_filter() needs no count.
std::string filter_condition(const ResultFilter& f, const std::string& results, const std::string& shapes) {
  std::string where;
  if (f.dtype) where += " AND " + results + ".dtype = ?2";
  if (f.threads) where += " AND " + results + ".threads = ?3";
  if (f.layout) where += " AND " + results + ".layout = ?4";
  if (f.shape) where += " AND " + shapes + ".m = ?5 AND " + shapes + ".n = ?6 AND " + shapes + ".k = ?7";
  return where;
}

void bind_filter(sqlite::Statement& query, const ResultFilter& f) {
  query.bind(1, f.platform_hash);
  if (f.dtype) query.bind(2, to_string(*f.dtype));
  if (f.threads) query.bind(3, *f.threads);
  if (f.layout) query.bind(4, to_string(*f.layout));
  if (f.shape) query.bind(5, f.shape->m).bind(6, f.shape->n).bind(7, f.shape->k);
}

}  // namespace

std::int64_t TuningStore::Impl::platform_id(const std::string& hash) {
  sqlite::Statement query = db.prepare("SELECT id FROM platforms WHERE hash = ?1");
  query.bind(1, hash);
  if (!query.step()) throw Error("database " + db.path() + " has no platform " + hash);
  return query.integer(0);
}

std::vector<Measurement> TuningStore::Impl::measurements(const ResultFilter& filter) {
  sqlite::Statement query =
      db.prepare(measurement_select() + filter_condition(filter, "r", "s") + kMeasurementOrder);
  bind_filter(query, filter);
  std::vector<Measurement> out;
  while (query.step()) out.push_back(read_record(query, measurement_fields(), db.path()));
  return out;
}

std::vector<Winner> TuningStore::Impl::winners(const ResultFilter& filter) {
  sqlite::Statement query = db.prepare(winner_select() + filter_condition(filter, "w", "w") + kWinnerOrder);
  bind_filter(query, filter);
  std::vector<Winner> out;
  while (query.step()) out.push_back(read_record(query, winner_fields(), db.path()));
  return out;
}

TuningStore::TuningStore(const std::string& path, Mode mode) {
  const schema::OpenMode how = mode == Mode::read_only    ? schema::OpenMode::read_only
                               : mode == Mode::read_write ? schema::OpenMode::read_write
                                                          : schema::OpenMode::create;
  impl_ = std::make_unique<Impl>(schema::open(path, how));
}

TuningStore::~TuningStore() = default;
TuningStore::TuningStore(TuningStore&&) noexcept = default;
TuningStore& TuningStore::operator=(TuningStore&&) noexcept = default;

const std::string& TuningStore::path() const { return impl_->db.path(); }

int TuningStore::schema_version() const {
  sqlite::Statement query = impl_->db.prepare("PRAGMA user_version");
  return query.step() ? static_cast<int>(query.integer(0)) : 0;
}

namespace {

// A platforms row (hash, then platform_columns()), refused as inconsistent
// when its fields do not hash to its stored hash: merged or exported, it
// would land under another key than its measurements'.
Platform read_checked_platform(const sqlite::Statement& row, const std::string& path) {
  Platform platform;
  try {
    platform = read_platform(row, 1);
    verify_platform_hash(platform, row.text(0));
  } catch (const Error& e) {
    throw Error("database " + path + " is inconsistent: platform " + row.text(0) + ": " + e.what());
  }
  return platform;
}

}  // namespace

std::vector<Platform> TuningStore::platforms() const {
  sqlite::Statement query =
      impl_->db.prepare("SELECT hash, " + platform_columns() + " FROM platforms ORDER BY hash");
  std::vector<Platform> out;
  while (query.step()) out.push_back(read_checked_platform(query, path()));
  return out;
}

std::optional<Platform> TuningStore::platform(const std::string& hash) const {
  sqlite::Statement query =
      impl_->db.prepare("SELECT hash, " + platform_columns() + " FROM platforms WHERE hash = ?1");
  query.bind(1, hash);
  if (!query.step()) return std::nullopt;
  return read_checked_platform(query, path());
}

void TuningStore::upsert_platform(const Platform& platform) {
  const std::string hash = platform.hash();
  auto check_stored = [&](const Platform& stored) {
    for (const PlatformField& field : platform_fields())
      if (field.identity && field.get(stored) != field.get(platform))
        throw Error("database " + path() + ": platform hash " + hash +
                    " already names a different platform (" + std::string(field.name) + " '" +
                    field.get(stored) + "' vs '" + field.get(platform) + "')");
  };
  if (const std::optional<Platform> stored = this->platform(hash)) return check_stored(*stored);
  // Not there a moment ago: look again and add it under the write lock, as
  // another tuner starting on this database may be adding it right now.
  std::optional<sqlite::Transaction> own;
  if (!impl_->db.in_transaction()) own.emplace(impl_->db);
  if (const std::optional<Platform> stored = this->platform(hash)) return check_stored(*stored);
  std::string placeholders;
  for (std::size_t i = 0; i < platform_fields().size(); ++i) placeholders += ", ?" + std::to_string(i + 2);
  sqlite::Statement insert = impl_->db.prepare("INSERT INTO platforms (hash, " + platform_columns() +
                                               ") VALUES (?1" + placeholders + ")");
  insert.bind(1, hash);
  int index = 2;
  for (const PlatformField& field : platform_fields()) {
    const std::string value = field.get(platform);
    if (field.numeric)
      insert.bind(index++, static_cast<std::int64_t>(std::stoll(value)));
    else
      insert.bind(index++, value);
  }
  insert.run();
  if (own) own->commit();
}

std::int64_t TuningStore::record(const std::string& platform_hash,
                                 std::span<const Measurement> measurements) {
  sqlite::Database& db = impl_->db;
  // Inside a batch, the batch's transaction holds these rows; alone, one
  // transaction per call keeps a recorded shape whole or absent.
  std::optional<sqlite::Transaction> own;
  if (!db.in_transaction()) own.emplace(db);

  const std::int64_t platform_id = impl_->platform_id(platform_hash);
  sqlite::Statement shape = db.prepare(
      "INSERT INTO shapes (m, n, k) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (m, n, k) DO UPDATE SET m = excluded.m RETURNING id");
  sqlite::Statement insert = db.prepare(measurement_insert());
  std::int64_t added = 0;
  // (shape id, dtype, threads, layout)
  std::set<std::tuple<std::int64_t, std::string_view, int, std::string_view>> touched;
  for (const Measurement& m : measurements) {
    if (m.measured_at.empty()) throw Error("database " + path() + ": a measurement has no time stamp");
    shape.bind(1, m.shape.m).bind(2, m.shape.n).bind(3, m.shape.k);
    if (!shape.step()) throw Error("database " + path() + ": could not store a shape");
    const std::int64_t shape_id = shape.integer(0);
    shape.reset();
    insert.bind(1, platform_id).bind(2, shape_id);
    bind_measurement(insert, m);
    insert.run();
    added += db.changes();
    insert.reset();
    touched.emplace(shape_id, to_string(m.dtype), m.threads, to_string(m.layout));
  }
  sqlite::Statement refresh = schema::prepare_refresh_winner(db);
  for (const auto& [shape_id, dtype, threads, layout] : touched) {
    refresh.bind(1, platform_id).bind(2, shape_id).bind(3, dtype).bind(4, threads).bind(5, layout);
    refresh.run();
    refresh.reset();
  }
  if (own) own->commit();
  return added;
}

void TuningStore::begin_batch() {
  if (impl_->batch) throw Error("database " + path() + ": batches do not nest");
  impl_->batch.emplace(impl_->db);
}

void TuningStore::commit_batch() {
  impl_->batch->commit();
  impl_->batch.reset();
}

void TuningStore::abandon_batch() noexcept { impl_->batch.reset(); }

bool TuningStore::begin_read() const {
  if (impl_->db.in_transaction()) return false;
  impl_->db.exec("BEGIN");
  return true;
}

void TuningStore::end_read(bool began) const noexcept {
  if (began) impl_->db.rollback();  // nothing was written: rollback ends the read
}

std::vector<Measurement> TuningStore::measurements(const ResultFilter& filter) const {
  return impl_->measurements(filter);
}

std::vector<Winner> TuningStore::winners(const ResultFilter& filter) const { return impl_->winners(filter); }

std::optional<Winner> TuningStore::winner(const ResultFilter& filter) const {
  assert(filter.dtype && filter.threads && filter.layout &&
         filter.shape);  // else "the one winner" is not one
  std::vector<Winner> found = impl_->winners(filter);
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<ResultGroup> TuningStore::result_groups(const std::string& platform_hash) const {
  sqlite::Statement query = impl_->db.prepare(
      "SELECT r.dtype, r.threads, COUNT(DISTINCT r.shape_id), COUNT(*), "
      "  (SELECT COUNT(*) FROM winning_configs AS w WHERE w.platform_id = r.platform_id AND w.dtype = "
      "r.dtype "
      "   AND w.threads = r.threads AND w.layout = r.layout), r.layout "
      "FROM measurements AS r JOIN platforms AS p ON p.id = r.platform_id WHERE p.hash = ?1 "
      "GROUP BY r.dtype, r.threads, r.layout ORDER BY r.dtype, r.threads, r.layout");
  query.bind(1, platform_hash);
  std::vector<ResultGroup> out;
  while (query.step())
    out.push_back({.dtype = parse_dtype(query.text(0)),
                   .threads = static_cast<int>(query.integer(1)),
                   .layout = parse_layout(query.text(5)),
                   .shapes = query.integer(2),
                   .tuned_shapes = query.integer(4),
                   .measurements = query.integer(3)});
  return out;
}

void TuningStore::save_calibration(const std::string& platform_hash, const Calibration& calibration) {
  save_calibration(platform_hash, calibration, utc_timestamp());
}

void TuningStore::save_calibration(const std::string& platform_hash, const Calibration& calibration,
                                   const std::string& measured_at) {
  calibration.check();
  check_printable(measured_at);
  sqlite::Statement upsert = impl_->db.prepare(
      "INSERT INTO calibrations (platform_id, gamma_gflops_per_core, beta_gbytes_per_s, measured_at) "
      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (platform_id) DO UPDATE SET "
      "gamma_gflops_per_core = excluded.gamma_gflops_per_core, beta_gbytes_per_s = "
      "excluded.beta_gbytes_per_s, "
      "measured_at = excluded.measured_at");
  upsert.bind(1, impl_->platform_id(platform_hash));
  upsert.bind(2, calibration.gamma_gflops_per_core)
      .bind(3, calibration.beta_gbytes_per_s)
      .bind(4, measured_at);
  upsert.run();
}

Calibration TuningStore::calibration(const std::string& platform_hash) const {
  sqlite::Statement query = impl_->db.prepare(
      "SELECT c.gamma_gflops_per_core, c.beta_gbytes_per_s FROM calibrations AS c "
      "JOIN platforms AS p ON p.id = c.platform_id WHERE p.hash = ?1");
  query.bind(1, platform_hash);
  if (!query.step()) return {};
  const Calibration stored{query.real(0), query.real(1)};
  try {
    stored.check();
  } catch (const Error& e) {  // the CHECKs were bypassed
    throw Error("database " + path() + " is inconsistent: " + e.what());
  }
  return stored;
}

std::optional<std::string> TuningStore::calibration_time(const std::string& platform_hash) const {
  sqlite::Statement query = impl_->db.prepare(
      "SELECT c.measured_at FROM calibrations AS c JOIN platforms AS p ON p.id = c.platform_id WHERE p.hash "
      "= ?1");
  query.bind(1, platform_hash);
  if (!query.step()) return std::nullopt;
  return query.text(0);
}

}  // namespace sfc
