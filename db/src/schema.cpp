#include "schema.hpp"

#include <iterator>
#include <string>

#include "sfc/error.hpp"

namespace sfc::schema {
namespace {

// PRAGMA application_id of every sfc-tune database: "SFCT".
constexpr int kApplicationId = 0x53464354;

// Migration i takes a database from version i to version i + 1. A released
// step is never edited; a schema change appends a new one.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the initial schema.
    R"sql(
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
CREATE VIEW config_times AS
SELECT platform_id, shape_id, dtype, threads, k_layers, k_block_factor, screening,
       SUM(mean_s * reps) / SUM(reps) AS mean_s, MIN(min_s) AS min_s,
       SUM(reps) AS reps, COUNT(*) AS measurements
FROM (SELECT *, MIN(screening) OVER (PARTITION BY platform_id, shape_id, dtype, threads,
                                                  k_layers, k_block_factor) AS kept
      FROM measurements)
WHERE screening = kept
GROUP BY platform_id, shape_id, dtype, threads, k_layers, k_block_factor;

-- The fastest fully measured configuration of every (platform, shape, dtype,
-- threads); ties go to the fewest copies of C, then the fewest K rounds.
CREATE VIEW winners AS
SELECT p.hash AS platform_hash, s.m, s.n, s.k, c.dtype, c.threads, c.k_layers, c.k_block_factor,
       c.mean_s, c.min_s, c.reps, 2.0 * s.m * s.n * s.k / c.mean_s / 1e9 AS gflops
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY platform_id, shape_id, dtype, threads
                                   ORDER BY mean_s, k_layers, k_block_factor) AS place
      FROM config_times WHERE screening = 0) AS c
JOIN platforms AS p ON p.id = c.platform_id
JOIN shapes AS s ON s.id = c.shape_id
WHERE c.place = 1;
)sql",
};
static_assert(std::size(kMigrations) == kVersion, "one migration per schema version");

int pragma_int(sqlite::Database& db, const char* pragma) {
  sqlite::Statement statement = db.prepare(pragma);
  return statement.step() ? static_cast<int>(statement.integer(0)) : 0;
}

}  // namespace

int check(sqlite::Database& db) {
  const std::string& path = db.path();
  // A file that is not SQLite fails here, before anything could write to it.
  int application_id = 0;
  try {
    application_id = pragma_int(db, "PRAGMA application_id");
  } catch (const sqlite::Failure& failure) {
    if ((failure.code & 0xff) == SQLITE_NOTADB)
      throw Error(path + " is not an SQLite database, so not a tuning database; it was left untouched");
    throw;
  }
  const int version = pragma_int(db, "PRAGMA user_version");
  if (application_id == 0 && version == 0) {
    if (pragma_int(db, "SELECT count(*) FROM sqlite_schema") != 0)
      throw Error(path + " is an SQLite database of another program, not an sfc-tune database");
    return 0;  // empty: the first read-write open creates the schema
  }
  if (application_id != kApplicationId)
    throw Error(path + " is an SQLite database of another program, not an sfc-tune database");
  if (version > kVersion)
    throw Error(path + " has schema version " + std::to_string(version) + ", newer than the version " +
                std::to_string(kVersion) + " this sfc-tune understands; use a newer sfc-tune");

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

void migrate(sqlite::Database& db) {
  sqlite::Transaction transaction(db);
  // Read again inside the write lock: another process may have migrated meanwhile.
  const int version = pragma_int(db, "PRAGMA user_version");
  if (version >= kVersion) return;
  for (int step = version; step < kVersion; ++step) db.exec(kMigrations[step]);
  db.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
  db.exec(("PRAGMA user_version = " + std::to_string(kVersion)).c_str());
  transaction.commit();
}

}  // namespace sfc::schema
