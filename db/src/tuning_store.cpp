#include "sfc/tuning_store.hpp"

#include <algorithm>
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

#include "schema.hpp"
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sqlite.hpp"

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

// The measurement columns every query selects, in read_measurement() order.
constexpr const char* kMeasurementSelect =
    "SELECT s.m, s.n, s.k, r.dtype, r.threads, r.k_layers, r.k_block_factor, r.effective_k_layers, "
    "r.effective_k_block_factor, r.bm, r.bn, r.bk, r.warmup, r.reps, r.mean_s, r.min_s, r.stddev_s, "
    "r.screening, r.measured_at, r.layout FROM measurements AS r JOIN shapes AS s ON s.id = r.shape_id "
    "JOIN platforms AS p ON p.id = r.platform_id WHERE p.hash = ?1";
constexpr const char* kMeasurementOrder =
    " ORDER BY s.m, s.n, s.k, r.dtype, r.threads, r.layout, r.k_layers, r.k_block_factor, r.screening, "
    "r.measured_at";

Measurement read_measurement(const sqlite::Statement& row) {
  Measurement m;
  m.shape = {row.integer(0), row.integer(1), row.integer(2)};
  m.dtype = parse_dtype(row.text(3));
  m.threads = static_cast<int>(row.integer(4));
  m.k_layers = static_cast<int>(row.integer(5));
  m.k_block_factor = static_cast<int>(row.integer(6));
  m.effective_k_layers = static_cast<int>(row.integer(7));
  m.effective_k_block_factor = static_cast<int>(row.integer(8));
  m.blocks = {static_cast<int>(row.integer(9)), static_cast<int>(row.integer(10)),
              static_cast<int>(row.integer(11))};
  m.warmup = static_cast<int>(row.integer(12));
  m.reps = static_cast<int>(row.integer(13));
  m.mean_s = row.real(14);
  m.min_s = row.real(15);
  m.stddev_s = row.real(16);
  m.screening = row.integer(17) != 0;
  m.measured_at = row.text(18);
  m.layout = parse_layout(row.text(19));
  return m;
}

constexpr const char* kWinnerSelect =
    "SELECT w.m, w.n, w.k, w.dtype, w.threads, w.k_layers, w.k_block_factor, w.mean_s, w.min_s, w.reps, "
    "w.layout FROM winners AS w WHERE w.platform_hash = ?1";
constexpr const char* kWinnerOrder = " ORDER BY w.m, w.n, w.k, w.dtype, w.threads, w.layout";

Winner read_winner(const sqlite::Statement& row) {
  Winner w;
  w.shape = {row.integer(0), row.integer(1), row.integer(2)};
  w.dtype = parse_dtype(row.text(3));
  w.threads = static_cast<int>(row.integer(4));
  w.k_layers = static_cast<int>(row.integer(5));
  w.k_block_factor = static_cast<int>(row.integer(6));
  w.mean_s = row.real(7);
  w.min_s = row.real(8);
  w.reps = static_cast<int>(row.integer(9));
  w.layout = parse_layout(row.text(10));
  return w;
}

sqlite::Database open_database(const std::string& path, TuningStore::Mode mode) {
  namespace fs = std::filesystem;
  std::error_code error;
  const bool exists = fs::exists(path, error);
  if (mode != TuningStore::Mode::create && !exists) throw Error("no tuning database at " + path);
  if (exists && fs::is_directory(path, error)) throw Error(path + " is a directory, not a tuning database");
  if (exists && !fs::is_regular_file(path, error))  // a pipe or device: SQLite would block or misread it
    throw Error(path + " is not a regular file, so not a tuning database; it was left untouched");
  if (!exists) {
    const fs::path parent = fs::absolute(path, error).parent_path();
    if (!fs::is_directory(parent, error))
      throw Error("cannot create database " + path + ": directory " + parent.string() + " does not exist");
  }
  const int flags = mode == TuningStore::Mode::read_only    ? SQLITE_OPEN_READONLY
                    : mode == TuningStore::Mode::read_write ? SQLITE_OPEN_READWRITE
                                                            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  return sqlite::Database(path, flags);
}

std::string text_pragma(sqlite::Database& db, const char* pragma) {
  sqlite::Statement statement = db.prepare(pragma);
  return statement.step() ? statement.text(0) : std::string();
}

// Switching a new file to WAL takes an exclusive lock, and SQLite answers
// SQLITE_BUSY at once, without its busy handler, while another connection
// holds the file (two imports creating one database). Retry for as long as
// the busy timeout would wait.
std::string switch_to_wal(sqlite::Database& db) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int attempt = 0;; ++attempt) {
    try {
      return text_pragma(db, "PRAGMA journal_mode = WAL");
    } catch (const sqlite::Failure& failure) {
      const int code = failure.code & 0xff;
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || std::chrono::steady_clock::now() > give_up) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, 1 + attempt)));
    }
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

struct TuningStore::Impl {
  sqlite::Database db;
  std::optional<sqlite::Transaction> batch;

  explicit Impl(sqlite::Database database) : db(std::move(database)) {}

  std::int64_t platform_id(const std::string& hash) {
    sqlite::Statement query = db.prepare("SELECT id FROM platforms WHERE hash = ?1");
    query.bind(1, hash);
    if (!query.step()) throw Error("database " + db.path() + " has no platform " + hash);
    return query.integer(0);
  }

  std::vector<Measurement> measurements(const std::string& where, const std::string& hash,
                                        const std::function<void(sqlite::Statement&)>& bind_more) {
    sqlite::Statement query = db.prepare(std::string(kMeasurementSelect) + where + kMeasurementOrder);
    query.bind(1, hash);
    bind_more(query);
    std::vector<Measurement> out;
    while (query.step()) out.push_back(read_measurement(query));
    return out;
  }

  std::vector<Winner> winners(const std::string& where, const std::string& hash,
                              const std::function<void(sqlite::Statement&)>& bind_more) {
    sqlite::Statement query = db.prepare(std::string(kWinnerSelect) + where + kWinnerOrder);
    query.bind(1, hash);
    bind_more(query);
    std::vector<Winner> out;
    while (query.step()) out.push_back(read_winner(query));
    return out;
  }
};

TuningStore::TuningStore(const std::string& path, Mode mode) {
  sqlite::Database db = open_database(path, mode);
  const int version = schema::check(db);
  if (mode == Mode::read_only) {
    if (version == 0) throw Error(path + " holds no tuning data (an empty file)");
    if (version < schema::kVersion)
      throw Error(path + " has the older schema version " + std::to_string(version) +
                  "; open it once for writing (sfc-tune import or tune) to migrate it");
  } else {
    // WAL lets readers in other processes work while a tuner writes; FULL
    // syncs every commit, so a finished shape survives even a power cut.
    if (switch_to_wal(db) != "wal")
      throw Error("database " + path + ": this file system does not support SQLite's WAL mode");
    db.exec("PRAGMA synchronous = FULL");
    if (version < schema::kVersion) schema::migrate(db);
  }
  db.exec("PRAGMA foreign_keys = ON");
  impl_ = std::make_unique<Impl>(std::move(db));
}

TuningStore::~TuningStore() = default;
TuningStore::TuningStore(TuningStore&&) noexcept = default;
TuningStore& TuningStore::operator=(TuningStore&&) noexcept = default;

const std::string& TuningStore::path() const { return impl_->db.path(); }

int TuningStore::schema_version() const {
  sqlite::Statement query = impl_->db.prepare("PRAGMA user_version");
  return query.step() ? static_cast<int>(query.integer(0)) : 0;
}

std::vector<Platform> TuningStore::platforms() const {
  sqlite::Statement query =
      impl_->db.prepare("SELECT " + platform_columns() + " FROM platforms ORDER BY hash");
  std::vector<Platform> out;
  while (query.step()) out.push_back(read_platform(query, 0));
  return out;
}

std::optional<Platform> TuningStore::platform(const std::string& hash) const {
  sqlite::Statement query =
      impl_->db.prepare("SELECT " + platform_columns() + " FROM platforms WHERE hash = ?1");
  query.bind(1, hash);
  if (!query.step()) return std::nullopt;
  return read_platform(query, 0);
}

void TuningStore::upsert_platform(const Platform& platform) {
  const std::string hash = platform.hash();
  if (const std::optional<Platform> stored = this->platform(hash)) {
    for (const PlatformField& field : platform_fields())
      if (field.identity && field.get(*stored) != field.get(platform))
        throw Error("database " + path() + ": platform hash " + hash +
                    " already names a different platform (" + std::string(field.name) + " '" +
                    field.get(*stored) + "' vs '" + field.get(platform) + "')");
    return;
  }
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
  sqlite::Statement insert = db.prepare(
      "INSERT INTO measurements (platform_id, shape_id, dtype, threads, k_layers, k_block_factor, "
      "effective_k_layers, effective_k_block_factor, bm, bn, bk, warmup, reps, mean_s, min_s, stddev_s, "
      "screening, measured_at, layout) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
      "?15, "
      "?16, ?17, ?18, ?19) ON CONFLICT DO NOTHING");
  std::int64_t added = 0;
  // (shape id, dtype, threads, layout)
  std::set<std::tuple<std::int64_t, std::string_view, int, std::string_view>> touched;
  for (const Measurement& m : measurements) {
    if (m.measured_at.empty()) throw Error("database " + path() + ": a measurement has no time stamp");
    shape.bind(1, m.shape.m).bind(2, m.shape.n).bind(3, m.shape.k);
    if (!shape.step()) throw Error("database " + path() + ": could not store a shape");
    const std::int64_t shape_id = shape.integer(0);
    shape.reset();
    insert.bind(1, platform_id).bind(2, shape_id).bind(3, to_string(m.dtype)).bind(4, m.threads);
    insert.bind(5, m.k_layers).bind(6, m.k_block_factor);
    insert.bind(7, m.effective_k_layers).bind(8, m.effective_k_block_factor);
    insert.bind(9, m.blocks.bm).bind(10, m.blocks.bn).bind(11, m.blocks.bk);
    insert.bind(12, m.warmup).bind(13, m.reps).bind(14, m.mean_s).bind(15, m.min_s).bind(16, m.stddev_s);
    insert.bind(17, m.screening ? 1 : 0).bind(18, m.measured_at).bind(19, to_string(m.layout));
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

std::vector<Measurement> TuningStore::measurements(const std::string& platform_hash) const {
  return impl_->measurements("", platform_hash, [](sqlite::Statement&) {});
}

std::vector<Measurement> TuningStore::measurements(const std::string& platform_hash, DType dtype, int threads,
                                                   Layout layout) const {
  return impl_->measurements(
      " AND r.dtype = ?2 AND r.threads = ?3 AND r.layout = ?4", platform_hash,
      [&](sqlite::Statement& q) { q.bind(2, to_string(dtype)).bind(3, threads).bind(4, to_string(layout)); });
}

std::vector<Measurement> TuningStore::measurements(const std::string& platform_hash, const GemmShape& shape,
                                                   DType dtype, int threads, Layout layout) const {
  return impl_->measurements(
      " AND r.dtype = ?2 AND r.threads = ?3 AND r.layout = ?4 AND s.m = ?5 AND s.n = ?6 AND s.k = ?7",
      platform_hash, [&](sqlite::Statement& q) {
        q.bind(2, to_string(dtype)).bind(3, threads).bind(4, to_string(layout));
        q.bind(5, shape.m).bind(6, shape.n).bind(7, shape.k);
      });
}

std::vector<Winner> TuningStore::winners(const std::string& platform_hash) const {
  return impl_->winners("", platform_hash, [](sqlite::Statement&) {});
}

std::vector<Winner> TuningStore::winners(const std::string& platform_hash, DType dtype, int threads,
                                         Layout layout) const {
  return impl_->winners(
      " AND w.dtype = ?2 AND w.threads = ?3 AND w.layout = ?4", platform_hash,
      [&](sqlite::Statement& q) { q.bind(2, to_string(dtype)).bind(3, threads).bind(4, to_string(layout)); });
}

std::optional<Winner> TuningStore::winner(const std::string& platform_hash, const GemmShape& shape,
                                          DType dtype, int threads, Layout layout) const {
  std::vector<Winner> found = impl_->winners(
      " AND w.dtype = ?2 AND w.threads = ?3 AND w.layout = ?4 AND w.m = ?5 AND w.n = ?6 AND w.k = ?7",
      platform_hash, [&](sqlite::Statement& q) {
        q.bind(2, to_string(dtype)).bind(3, threads).bind(4, to_string(layout));
        q.bind(5, shape.m).bind(6, shape.n).bind(7, shape.k);
      });
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
  if (!(calibration.gamma_gflops_per_core >= 0 && std::isfinite(calibration.gamma_gflops_per_core)) ||
      !(calibration.beta_gbytes_per_s >= 0 && std::isfinite(calibration.beta_gbytes_per_s)))
    throw Error("a calibration needs finite gamma and beta >= 0 (0 = unknown)");
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
  return {query.real(0), query.real(1)};
}

std::optional<std::string> TuningStore::calibration_time(const std::string& platform_hash) const {
  sqlite::Statement query = impl_->db.prepare(
      "SELECT c.measured_at FROM calibrations AS c JOIN platforms AS p ON p.id = c.platform_id WHERE p.hash "
      "= ?1");
  query.bind(1, platform_hash);
  if (!query.step()) return std::nullopt;
  return query.text(0);
}

std::vector<TuningTable> TuningStore::tables() const {
  return snapshot([&] {
    std::vector<TuningTable> out;
    for (const Platform& p : platforms()) out.push_back(table(p.hash()));
    return out;
  });
}

TuningTable TuningStore::table(const std::string& platform_hash) const {
  return snapshot([&] {
    TuningTable table;
    for (const ResultGroup& group : result_groups(platform_hash)) {
      TuningTable part = this->table(platform_hash, group.dtype, group.threads, group.layout);
      table.platform = std::move(part.platform);
      table.calibration = part.calibration;
      table.shapes.insert(table.shapes.end(), part.shapes.begin(), part.shapes.end());
    }
    if (table.shapes.empty()) {  // still name the platform and its calibration
      const std::optional<Platform> platform = this->platform(platform_hash);
      if (!platform) throw Error("database " + path() + " has no platform " + platform_hash);
      table.platform = *platform;
      table.calibration = calibration(platform_hash);
    }
    return table;
  });
}

TuningTable TuningStore::table(const std::string& platform_hash, DType dtype, int threads,
                               Layout layout) const {
  return snapshot([&] {
    const std::optional<Platform> platform = this->platform(platform_hash);
    if (!platform) throw Error("database " + path() + " has no platform " + platform_hash);
    TuningTable table{.platform = *platform, .calibration = calibration(platform_hash), .shapes = {}};

    // Every configuration's time, shape by shape, then the winners on top.
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, TunedShape> shapes;
    sqlite::Statement times = impl_->db.prepare(
        "SELECT s.m, s.n, s.k, c.k_layers, c.k_block_factor, c.min_s FROM config_times AS c "
        "JOIN shapes AS s ON s.id = c.shape_id "
        "WHERE c.platform_id = (SELECT id FROM platforms WHERE hash = ?1) AND c.dtype = ?2 AND c.threads = "
        "?3 "
        "AND c.layout = ?4");
    times.bind(1, platform_hash).bind(2, to_string(dtype)).bind(3, threads).bind(4, to_string(layout));
    while (times.step()) {
      auto [entry, added] = shapes.try_emplace({times.integer(0), times.integer(1), times.integer(2)});
      TunedShape& shape = entry->second;
      if (added) {
        shape.shape = {times.integer(0), times.integer(1), times.integer(2)};
        shape.dtype = dtype;
        shape.threads = threads;
        shape.layout = layout;
        shape.seconds.fill(NAN);
      }
      const std::int64_t kl = times.integer(3), kbf = times.integer(4);
      if (kl < 1 || kl > kMaxKLayers || kbf < 1 || kbf > kMaxKBlockFactor)  // the CHECKs were bypassed
        throw Error("database " + path() + " is inconsistent: a measurement of " + to_string(shape.shape) +
                    " has K_layers " + std::to_string(kl) + ", k_block_factor " + std::to_string(kbf) +
                    " (each must lie in 1..8)");
      shape.seconds[config_index(static_cast<int>(kl), static_cast<int>(kbf))] =
          static_cast<float>(times.real(5));
    }
    // In one snapshot every winner has its times: a winner is only ever
    // written in the transaction that adds its measurements.
    for (const Winner& winner : winners(platform_hash, dtype, threads, layout)) {
      const auto found = shapes.find({winner.shape.m, winner.shape.n, winner.shape.k});
      if (found == shapes.end())
        throw Error("database " + path() + " is inconsistent: a winner of " + to_string(winner.shape) +
                    " has no measurements");
      TunedShape& shape = found->second;
      shape.k_layers = winner.k_layers;
      shape.k_block_factor = winner.k_block_factor;
      table.shapes.push_back(shape);  // winners come ordered by M, N, K
    }
    return table;
  });
}

}  // namespace sfc
