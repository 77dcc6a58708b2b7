#include "schema.hpp"

#include <fcntl.h>  // renameat2
#include <signal.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"

namespace sfc::schema {
namespace {

void rekey_platforms(sqlite::Database& db);

// Migration i takes a database from version i to version i + 1: its SQL, then
// (where SQL cannot say it) a step in C++. A released step is never edited; a
// schema change appends a new one.
struct Migration {
  const char* sql;
  void (*then)(sqlite::Database&) = nullptr;
};
constexpr Migration kMigrations[] = {
    // 0 -> 1: the initial schema.
    {R"sql(
CREATE TABLE platforms (
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  cpu_model TEXT NOT NULL,
  cores INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  l1d_bytes INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  l3_bytes INTEGER NOT NULL,
  isa TEXT NOT NULL,
  libxsmm_version TEXT NOT NULL,
  compiler TEXT NOT NULL
) STRICT;

CREATE TABLE shapes (
  id INTEGER PRIMARY KEY,
  m INTEGER NOT NULL CHECK (m > 0),
  n INTEGER NOT NULL CHECK (n > 0),
  k INTEGER NOT NULL CHECK (k > 0),
  UNIQUE (m, n, k)
) STRICT;

-- One row per timed configuration. A configuration that clamps to the same
-- effective plan as another is timed once and recorded under each request.
-- screening = 1: pruning's single cheap repetition, not a full measurement.
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  platform_id INTEGER NOT NULL REFERENCES platforms (id),
  shape_id INTEGER NOT NULL REFERENCES shapes (id),
  dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f64', 'bf16')),
  threads INTEGER NOT NULL CHECK (threads > 0),
  k_layers INTEGER NOT NULL CHECK (k_layers BETWEEN 1 AND 8),
  k_block_factor INTEGER NOT NULL CHECK (k_block_factor BETWEEN 1 AND 8),
  effective_k_layers INTEGER NOT NULL CHECK (effective_k_layers BETWEEN 1 AND 8),
  effective_k_block_factor INTEGER NOT NULL CHECK (effective_k_block_factor BETWEEN 1 AND 8),
  bm INTEGER NOT NULL CHECK (bm > 0),
  bn INTEGER NOT NULL CHECK (bn > 0),
  bk INTEGER NOT NULL CHECK (bk > 0),
  warmup INTEGER NOT NULL CHECK (warmup >= 0),
  reps INTEGER NOT NULL CHECK (reps > 0),
  mean_s REAL NOT NULL CHECK (mean_s > 0),
  min_s REAL NOT NULL CHECK (min_s > 0),
  stddev_s REAL NOT NULL CHECK (stddev_s >= 0),
  screening INTEGER NOT NULL CHECK (screening IN (0, 1)),
  measured_at TEXT NOT NULL,  -- ISO-8601 UTC with microseconds
  -- The identity of a measurement: importing or merging it twice keeps one row.
  UNIQUE (platform_id, shape_id, dtype, threads, k_layers, k_block_factor, screening, measured_at)
) STRICT;

CREATE TABLE calibrations (
  platform_id INTEGER PRIMARY KEY REFERENCES platforms (id),
  gamma_gflops_per_core REAL NOT NULL CHECK (gamma_gflops_per_core >= 0),
  beta_gbytes_per_s REAL NOT NULL CHECK (beta_gbytes_per_s >= 0),
  measured_at TEXT NOT NULL
) STRICT;

-- Every configuration's time: the mean of all its full measurements pooled
-- (weighted by repetitions), or of its screening ones when it has no full one.
-- (A plain aggregate, so a query filtering on its grouping columns reads
-- only the matching rows through the measurements index.)
CREATE VIEW config_times AS
SELECT platform_id, shape_id, dtype, threads, k_layers, k_block_factor, screening,
       SUM(mean_s * reps) / SUM(reps) AS mean_s, MIN(min_s) AS min_s,
       SUM(reps) AS reps, COUNT(*) AS measurements
FROM measurements AS r
WHERE screening = 0 OR NOT EXISTS (
  SELECT 1 FROM measurements AS f
  WHERE f.platform_id = r.platform_id AND f.shape_id = r.shape_id AND f.dtype = r.dtype
    AND f.threads = r.threads AND f.k_layers = r.k_layers AND f.k_block_factor = r.k_block_factor
    AND f.screening = 0)
GROUP BY platform_id, shape_id, dtype, threads, k_layers, k_block_factor;

-- The winner of every (platform, shape, dtype, threads) with a full
-- measurement, kept up to date by the store in the transaction that adds
-- measurements (see kRefreshWinner): derived data, stored because computing
-- it over a whole view for every shape does not scale.
CREATE TABLE winning_configs (
  platform_id INTEGER NOT NULL REFERENCES platforms (id),
  shape_id INTEGER NOT NULL REFERENCES shapes (id),
  dtype TEXT NOT NULL,
  threads INTEGER NOT NULL,
  k_layers INTEGER NOT NULL,
  k_block_factor INTEGER NOT NULL,
  mean_s REAL NOT NULL,
  min_s REAL NOT NULL,
  reps INTEGER NOT NULL,
  PRIMARY KEY (platform_id, shape_id, dtype, threads)
) STRICT, WITHOUT ROWID;

CREATE VIEW winners AS
SELECT p.hash AS platform_hash, s.m, s.n, s.k, w.dtype, w.threads, w.k_layers, w.k_block_factor,
       w.mean_s, w.min_s, w.reps, 2.0 * s.m * s.n * s.k / w.mean_s / 1e9 AS gflops
FROM winning_configs AS w
JOIN platforms AS p ON p.id = w.platform_id
JOIN shapes AS s ON s.id = w.shape_id;
)sql"},

    // 1 -> 2: a configuration's time is its fastest run (min_s), no longer its
    // mean (see sfc/tuner.hpp): the winners are chosen again by that rule and
    // the winners view reports GFLOP/s at that time.
    {R"sql(
DELETE FROM winning_configs;
INSERT INTO winning_configs
  (platform_id, shape_id, dtype, threads, k_layers, k_block_factor, mean_s, min_s, reps)
SELECT platform_id, shape_id, dtype, threads, k_layers, k_block_factor, mean_s, min_s, reps
FROM (SELECT *, row_number() OVER (PARTITION BY platform_id, shape_id, dtype, threads
                                   ORDER BY min_s, k_layers, k_block_factor) AS place
      FROM config_times WHERE screening = 0)
WHERE place = 1;

DROP VIEW winners;
CREATE VIEW winners AS
SELECT p.hash AS platform_hash, s.m, s.n, s.k, w.dtype, w.threads, w.k_layers, w.k_block_factor,
       w.mean_s, w.min_s, w.reps, 2.0 * s.m * s.n * s.k / w.min_s / 1e9 AS gflops
FROM winning_configs AS w
JOIN platforms AS p ON p.id = w.platform_id
JOIN shapes AS s ON s.id = w.shape_id;
)sql"},

    // 2 -> 3: a measurement also records the entry layout it timed: 'blocked'
    // (execute() on the native layout) or 'row'/'col' (gemm() on plain
    // matrices, packing included). The entries cost differently -- row-major
    // C written in place makes extra copies of C and short K rounds dearer --
    // so each layout has its own winners
    // (docs/experiments/2026-12-07-figures-from-code-comments.md#schema-3-one-winner-per-layout).
    // Every earlier row was measured blocked. The tables are rebuilt because
    // the layout joins their identity (UNIQUE, PRIMARY KEY), which ALTER TABLE cannot change.
    {R"sql(
DROP VIEW winners;
DROP VIEW config_times;

CREATE TABLE measurements_v3 (
  id INTEGER PRIMARY KEY,
  platform_id INTEGER NOT NULL REFERENCES platforms (id),
  shape_id INTEGER NOT NULL REFERENCES shapes (id),
  dtype TEXT NOT NULL CHECK (dtype IN ('f32', 'f64', 'bf16')),
  threads INTEGER NOT NULL CHECK (threads > 0),
  layout TEXT NOT NULL CHECK (layout IN ('blocked', 'row', 'col')),
  k_layers INTEGER NOT NULL CHECK (k_layers BETWEEN 1 AND 8),
  k_block_factor INTEGER NOT NULL CHECK (k_block_factor BETWEEN 1 AND 8),
  effective_k_layers INTEGER NOT NULL CHECK (effective_k_layers BETWEEN 1 AND 8),
  effective_k_block_factor INTEGER NOT NULL CHECK (effective_k_block_factor BETWEEN 1 AND 8),
  bm INTEGER NOT NULL CHECK (bm > 0),
  bn INTEGER NOT NULL CHECK (bn > 0),
  bk INTEGER NOT NULL CHECK (bk > 0),
  warmup INTEGER NOT NULL CHECK (warmup >= 0),
  reps INTEGER NOT NULL CHECK (reps > 0),
  mean_s REAL NOT NULL CHECK (mean_s > 0),
  min_s REAL NOT NULL CHECK (min_s > 0),
  stddev_s REAL NOT NULL CHECK (stddev_s >= 0),
  screening INTEGER NOT NULL CHECK (screening IN (0, 1)),
  measured_at TEXT NOT NULL,
  UNIQUE (platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor, screening, measured_at)
) STRICT;
INSERT INTO measurements_v3
  (id, platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor, effective_k_layers,
   effective_k_block_factor, bm, bn, bk, warmup, reps, mean_s, min_s, stddev_s, screening, measured_at)
SELECT id, platform_id, shape_id, dtype, threads, 'blocked', k_layers, k_block_factor, effective_k_layers,
       effective_k_block_factor, bm, bn, bk, warmup, reps, mean_s, min_s, stddev_s, screening, measured_at
FROM measurements;
DROP TABLE measurements;
ALTER TABLE measurements_v3 RENAME TO measurements;

CREATE TABLE winning_configs_v3 (
  platform_id INTEGER NOT NULL REFERENCES platforms (id),
  shape_id INTEGER NOT NULL REFERENCES shapes (id),
  dtype TEXT NOT NULL,
  threads INTEGER NOT NULL,
  layout TEXT NOT NULL,
  k_layers INTEGER NOT NULL,
  k_block_factor INTEGER NOT NULL,
  mean_s REAL NOT NULL,
  min_s REAL NOT NULL,
  reps INTEGER NOT NULL,
  PRIMARY KEY (platform_id, shape_id, dtype, threads, layout)
) STRICT, WITHOUT ROWID;
INSERT INTO winning_configs_v3
SELECT platform_id, shape_id, dtype, threads, 'blocked', k_layers, k_block_factor, mean_s, min_s, reps
FROM winning_configs;
DROP TABLE winning_configs;
ALTER TABLE winning_configs_v3 RENAME TO winning_configs;

CREATE VIEW config_times AS
SELECT platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor, screening,
       SUM(mean_s * reps) / SUM(reps) AS mean_s, MIN(min_s) AS min_s,
       SUM(reps) AS reps, COUNT(*) AS measurements
FROM measurements AS r
WHERE screening = 0 OR NOT EXISTS (
  SELECT 1 FROM measurements AS f
  WHERE f.platform_id = r.platform_id AND f.shape_id = r.shape_id AND f.dtype = r.dtype
    AND f.threads = r.threads AND f.layout = r.layout AND f.k_layers = r.k_layers
    AND f.k_block_factor = r.k_block_factor AND f.screening = 0)
GROUP BY platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor;

CREATE VIEW winners AS
SELECT p.hash AS platform_hash, s.m, s.n, s.k, w.dtype, w.threads, w.layout, w.k_layers, w.k_block_factor,
       w.mean_s, w.min_s, w.reps, 2.0 * s.m * s.n * s.k / w.min_s / 1e9 AS gflops
FROM winning_configs AS w
JOIN platforms AS p ON p.id = w.platform_id
JOIN shapes AS s ON s.id = w.shape_id;
)sql"},

    // 3 -> 4: the platform hash names the hardware only (sfc/platform.hpp):
    // hwloc reads the topology, the platform gains its NUMA node count, and
    // the compiler and LIBXSMM version are recorded but no longer identity.
    // Rows written before hold an L3 size from sysconf, which is neither per
    // instance nor stable (508 MiB on one 2-core Zen 5, 384 MiB on its twin,
    // for a 32 MiB L3): it becomes 0, unknown, as does numa_nodes. Every hash
    // is then computed anew (rekey_platforms), and platforms that now share
    // one are merged.
    {R"sql(
ALTER TABLE platforms ADD COLUMN numa_nodes INTEGER NOT NULL DEFAULT 0 CHECK (numa_nodes >= 0);
UPDATE platforms SET l3_bytes = 0;
)sql",
     rekey_platforms},
};
static_assert(std::size(kMigrations) == kVersion, "one migration per schema version");

// The winning rule: the fully measured configuration with the fastest run
// (min_s, see sfc/tuner.hpp); ties go to the fewest copies of C, then the
// fewest K rounds.
constexpr const char* kRefreshWinner = R"sql(
INSERT OR REPLACE INTO winning_configs
  (platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor, mean_s, min_s, reps)
SELECT platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor, mean_s, min_s, reps
FROM config_times
WHERE platform_id = ?1 AND shape_id = ?2 AND dtype = ?3 AND threads = ?4 AND layout = ?5 AND screening = 0
ORDER BY min_s, k_layers, k_block_factor LIMIT 1
)sql";

// Recomputes every platform's hash from its fields; rows that now share a
// hash are merged into the oldest (every measurement kept, the newer
// calibration kept, winners chosen again over the union).
void rekey_platforms(sqlite::Database& db) {
  std::map<std::string, std::vector<std::int64_t>> ids_by_hash;  // ids in ascending order
  {
    std::string columns;
    for (const PlatformField& f : platform_fields()) columns += ", " + std::string(f.name);
    sqlite::Statement rows = db.prepare("SELECT id" + columns + " FROM platforms ORDER BY id");
    while (rows.step()) {
      Platform p;
      int column = 1;
      for (const PlatformField& f : platform_fields()) f.set(p, rows.text(column++));
      ids_by_hash[p.hash()].push_back(rows.integer(0));
    }
  }
  // Unique placeholders first, so that no new hash meets an old one mid-way.
  db.exec("UPDATE platforms SET hash = 'rekey-' || id");
  sqlite::Statement set_hash = db.prepare("UPDATE platforms SET hash = ?2 WHERE id = ?1");
  for (const auto& [hash, ids] : ids_by_hash) {
    const std::int64_t keep = ids.front();
    for (std::size_t i = 1; i < ids.size(); ++i) {
      const std::string from = std::to_string(ids[i]), into = std::to_string(keep);
      // A measurement present under both ids (imported twice) is kept once.
      db.exec(
          ("UPDATE OR IGNORE measurements SET platform_id = " + into + " WHERE platform_id = " + from +
           "; DELETE FROM measurements WHERE platform_id = " + from + "; INSERT INTO calibrations SELECT " +
           into +
           ", gamma_gflops_per_core, beta_gbytes_per_s, measured_at FROM calibrations WHERE platform_id = " +
           from +
           " AND true ON CONFLICT (platform_id) DO UPDATE SET "
           "gamma_gflops_per_core = excluded.gamma_gflops_per_core, "
           "beta_gbytes_per_s = excluded.beta_gbytes_per_s, measured_at = excluded.measured_at "
           "WHERE excluded.measured_at > calibrations.measured_at"
           "; DELETE FROM calibrations WHERE platform_id = " +
           from + "; DELETE FROM winning_configs WHERE platform_id IN (" + from + ", " + into +
           ")"
           "; DELETE FROM platforms WHERE id = " +
           from + ";")
              .c_str());
      db.exec(("INSERT INTO winning_configs (platform_id, shape_id, dtype, threads, layout, k_layers, "
               "k_block_factor, mean_s, min_s, reps) "
               "SELECT platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor, mean_s, "
               "min_s, reps "
               "FROM (SELECT *, row_number() OVER (PARTITION BY shape_id, dtype, threads, layout "
               "ORDER BY min_s, k_layers, k_block_factor) AS place FROM config_times "
               "WHERE platform_id = " +
               into + " AND screening = 0) WHERE place = 1;")
                  .c_str());
    }
    set_hash.bind(1, keep).bind(2, hash);
    set_hash.run();
    set_hash.reset();
  }
}

int pragma_int(sqlite::Database& db, const char* pragma) {
  sqlite::Statement statement = db.prepare(pragma);
  return statement.step() ? static_cast<int>(statement.integer(0)) : 0;
}

}  // namespace

int version_of(const Snapshot& s, const std::string& path) {
  if (s.application_id == 0 && s.user_version == 0) {
    if (s.schema_objects != 0)
      throw Error(path + " is an SQLite database of another program, not an sfc-tune database");
    return 0;  // empty: the first read-write open creates the schema
  }
  if (s.application_id != kApplicationId)
    throw Error(path + " is an SQLite database of another program, not an sfc-tune database");
  if (s.user_version < 1 || s.user_version > kVersion)
    throw Error(path + " has schema version " + std::to_string(s.user_version) + ", " +
                (s.user_version < 1 ? "which no sfc-tune writes"
                                    : "newer than the version " + std::to_string(kVersion) +
                                          " this sfc-tune understands; use a newer sfc-tune"));
  return static_cast<int>(s.user_version);
}

int check(sqlite::Database& db) {
  const std::string& path = db.path();
  // One read transaction: the header fields, the schema and the integrity
  // check all see one snapshot, however a writer in another process commits
  // meanwhile (a migration sets the schema, the application id and the
  // version in one commit, and three separate reads could straddle it).
  sqlite::ReadTransaction read(db);
  Snapshot snapshot;
  try {
    sqlite::Statement header = db.prepare(
        "SELECT (SELECT application_id FROM pragma_application_id), "
        "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
    if (!header.step()) throw Error(path + ": no answer from SQLite reading the database header");
    snapshot = {header.integer(0), header.integer(1), header.integer(2)};
  } catch (const sqlite::Failure& failure) {
    // A file that is not SQLite fails here, before anything could write to it.
    if ((failure.code & 0xff) == SQLITE_NOTADB)
      throw Error(path + " is not an SQLite database, so not a tuning database; it was left untouched");
    throw;
  }
  const int version = version_of(snapshot, path);
  if (version == 0) return 0;

  std::string verdict;
  try {
    sqlite::Statement quick_check = db.prepare("PRAGMA quick_check(1)");
    verdict = quick_check.step() ? quick_check.text(0) : "no answer from quick_check";
  } catch (const Error& e) {
    verdict = e.what();
  }
  if (verdict != "ok") throw Error(path + " is corrupt (" + verdict + "); it was left untouched");
  return version;
}

sqlite::Statement prepare_refresh_winner(sqlite::Database& db) { return db.prepare(kRefreshWinner); }

void migrate(sqlite::Database& db, int target) {
  if (target < 1 || target > kVersion) throw Error("no schema version " + std::to_string(target));
  sqlite::Transaction transaction(db);
  // Read again inside the write lock: another process may have migrated meanwhile.
  const int version = pragma_int(db, "PRAGMA user_version");
  if (version >= target) return;
  for (int step = version; step < target; ++step) {
    db.exec(kMigrations[step].sql);
    if (kMigrations[step].then) kMigrations[step].then(db);
  }
  db.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
  db.exec(("PRAGMA user_version = " + std::to_string(target)).c_str());
  transaction.commit();
}

namespace {

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

// WAL mode for writers, and FULL syncs.
void prepare_for_writing(sqlite::Database& db) {
  // WAL lets readers in other processes work while a tuner writes; FULL
  // syncs every commit, so a finished shape survives even a power cut.
  if (switch_to_wal(db) != "wal")
    throw Error("database " + db.path() + ": this file system does not support SQLite's WAL mode");
  db.exec("PRAGMA synchronous = FULL");
}

// Leftovers of creators killed mid-way ("<name>.new-<pid>-<tid>", see below)
// whose process is gone.
void remove_stale_creations(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const std::string prefix = path.filename().string() + ".new-";
  for (const fs::directory_entry& entry : fs::directory_iterator(path.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string pid =
        name.substr(prefix.size(), name.find_first_not_of("0123456789", prefix.size()) - prefix.size());
    if (pid.empty() || pid.size() > 9) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) fs::remove(entry.path(), error);
  }
}

// A new database appears whole or not at all. SQLite writes the first page
// of a new file through a rollback journal, and a process killed then leaves
// a hot journal that only a writer can roll back: every read-only open
// (query, export, libsfcconf) would fail until one came. So the file is built
// under a name of this process's own (WAL mode, the current schema) and
// linked into place; a creator that loses the race opens the winner's file.
// The temporary name is the creating thread's own.
void create_atomically(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path target = fs::absolute(path, error);
  if (!fs::is_directory(target.parent_path(), error))
    throw Error("cannot create database " + path + ": directory " + target.parent_path().string() +
                " does not exist");
  remove_stale_creations(target);
  // Of this thread, not only this process: threads of one process (online
  // tuning in a threaded program) create the same database at once too.
  const std::string temporary =
      target.string() + ".new-" + std::to_string(::getpid()) + "-" + std::to_string(::gettid());
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(temporary + suffix, error);
  try {
    // The schema is written in rollback mode, straight into the file, and
    // only then is the file switched to WAL: when this block ends without
    // an exception, the file alone holds everything (no WAL to carry along).
    {
      sqlite::Database db(temporary, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      db.exec("PRAGMA synchronous = FULL");
      migrate(db);
      prepare_for_writing(db);
    }
    if (fs::file_size(temporary + "-wal", error) > 0 && !error)  // closing could not checkpoint
      throw Error("its first pages could not be written");
  } catch (const Error& e) {  // the message names the temporary file: name the one asked for
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(temporary + suffix, error);
    throw Error("cannot create database " + path + ": " + e.what());
  }
  if (::link(temporary.c_str(), target.c_str()) != 0 && errno != EEXIST) {
    // A file system without hard links: rename, unless the name was taken meanwhile.
    if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0 &&
        errno != EEXIST && !fs::exists(target, error))
      fs::rename(temporary, target, error);
  }
  fs::remove(temporary, error);
}

// The file system holding `path` is mounted read-only (a shared, published
// copy of a tuning database, or a container's image).
bool on_read_only_file_system(const std::string& path) {
  struct statvfs info {};
  return ::statvfs(path.c_str(), &info) == 0 && (info.f_flag & ST_RDONLY) != 0;
}

sqlite::Database open_file(const std::string& path, OpenMode mode) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (mode != OpenMode::read_only && fs::exists(path, error) && on_read_only_file_system(path))
    throw Error("database " + path +
                " is on a read-only file system: it can be read (query, export, db info, libsfcconf) but not "
                "written (tune, import, merge); tune into a copy elsewhere and merge it back");
  if (mode == OpenMode::create && !fs::exists(path, error) && !fs::is_symlink(path, error))
    create_atomically(path);
  const bool exists = fs::exists(path, error);
  if (!exists) throw Error("no tuning database at " + path);
  if (fs::is_directory(path, error)) throw Error(path + " is a directory, not a tuning database");
  if (!fs::is_regular_file(path, error))  // a pipe or device: SQLite would block or misread it
    throw Error(path + " is not a regular file, so not a tuning database; it was left untouched");
  const std::string directory = fs::absolute(path, error).parent_path().string();
  if (mode == OpenMode::read_only && on_read_only_file_system(path)) {
    // No process can be writing it, and SQLite could not create the -shm
    // file a WAL database is read through: read it as the immutable file it
    // is. Unless a WAL with commits was left behind when the file system
    // became read-only: that needs the normal way (and its -shm) to be read.
    if (fs::file_size(path + "-wal", error) == 0 || error)
      return sqlite::Database(path, SQLITE_OPEN_READONLY, /*immutable=*/true);
  }
  if (mode == OpenMode::read_only && ::access(directory.c_str(), W_OK) != 0 &&
      !fs::exists(path + "-shm", error)) {
    // A shared database in a folder this user may not write (a fleet's, owned
    // by another user): SQLite cannot create the -shm a WAL database is read
    // through. With no WAL of commits beside it the file alone is the whole
    // database, read as immutable; a writer, who must create that WAL and its
    // -shm there, leaves the -shm behind for readers to use the normal way.
    if (fs::file_size(path + "-wal", error) == 0 || error)
      return sqlite::Database(path, SQLITE_OPEN_READONLY, /*immutable=*/true);
    throw Error("database " + path + " cannot be read by this user: its latest commits are in " + path +
                "-wal (a writer did not finish), read through a -shm file this user may not create in " +
                directory + "; a tune, import or merge by a user who may write there recovers it");
  }
  if (mode != OpenMode::read_only && ::access(path.c_str(), W_OK) != 0)
    throw Error("database " + path + " is not writable (" + std::strerror(errno) +
                "): it can be read but not written (tune, import, merge)");
  if (mode != OpenMode::read_only && ::access(directory.c_str(), W_OK) != 0)
    throw Error("database " + path + " is not writable: its directory " + directory + " is not (" +
                std::strerror(errno) +
                "), and SQLite keeps its -wal and -shm files there; it can be read but not written (tune, "
                "import, merge)");
  // A reader that may write the file opens it read-write and is kept from
  // writing by PRAGMA query_only (open() below): SQLite deletes the -wal and
  // -shm files when the last connection closes, but only a connection opened
  // read-write may, so a read-only one would leave them behind after every read.
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(directory.c_str(), W_OK) == 0;
  return sqlite::Database(
      path, mode == OpenMode::read_only && !writable ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE);
}

}  // namespace

sqlite::Database open(const std::string& path, OpenMode mode) {
  sqlite::Database db = open_file(path, mode);
  const int version = check(db);
  if (mode == OpenMode::read_only) {
    db.exec("PRAGMA query_only = ON");  // opened read-write only to clean up on close (open_file)
    if (version == 0) throw Error(path + " holds no tuning data (an empty file)");
    if (version < kVersion)
      throw Error(path + " has the older schema version " + std::to_string(version) +
                  "; open it once for writing (sfc-tune import or tune) to migrate it");
  } else {
    prepare_for_writing(db);
    if (version < kVersion) migrate(db);
  }
  db.exec("PRAGMA foreign_keys = ON");
  return db;
}

}  // namespace sfc::schema
