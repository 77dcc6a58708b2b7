// Raw SQLite for the db tests: to damage or hand-build databases (an old
// schema, rows past the CHECKs) and to judge them as SQLite itself would,
// without going through TuningStore, which is what is under test.
#pragma once
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

#include "schema.hpp"
#include "sfc/platform.hpp"
#include "sfc/platform_fields.hpp"
#include "sqlite.hpp"

namespace sfc::test {

inline void raw_sql(const std::string& path, const std::string& statements) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int code = sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE_MESSAGE(code == SQLITE_OK, message);
}

// The first column of the first row of `query`, as text ("" when none):
// e.g. "PRAGMA integrity_check" -> "ok", "PRAGMA user_version" -> "4".
inline std::string raw_value(const std::string& path, const char* query) {
  sqlite3* handle = nullptr;
  std::string value = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    value = "cannot prepare";
    if (sqlite3_prepare_v2(handle, query, -1, &statement, nullptr) == SQLITE_OK) {
      const int step = sqlite3_step(statement);
      const unsigned char* text = step == SQLITE_ROW ? sqlite3_column_text(statement, 0) : nullptr;
      value = text ? reinterpret_cast<const char*>(text) : step == SQLITE_DONE ? "" : sqlite3_errmsg(handle);
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(handle);
  return value;
}

inline std::string integrity(const std::string& path) { return raw_value(path, "PRAGMA integrity_check"); }

// Machines of a version 3 database (before hwloc: no NUMA column, L3 from
// sysconf, every field hashed): two of one kind keyed apart by a junk L3
// size and a compiler, and one other.
struct Version3Platforms {
  Platform twin_a, twin_b, other;
};

// A version 3 database at `path`: each platform with measurements of
// 512^3, the twins' overlapping in one configuration, and calibrations.
inline Version3Platforms make_version3_database(const std::string& path, const Platform& base) {
  {
    sqlite::Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    schema::migrate(db, 3);
  }
  Version3Platforms p{base, base, base};
  p.twin_a.numa_nodes = p.twin_b.numa_nodes = p.other.numa_nodes = 0;  // version 3 had no such column
  p.twin_a.l3_bytes = 532676608;
  p.twin_b.l3_bytes = 402653184;
  p.twin_b.compiler = "gcc 13";
  p.other.l2_bytes = 2 << 20;
  std::string sql;
  int id = 1;
  for (const Platform& platform : {p.twin_a, p.twin_b, p.other})
    sql += "INSERT INTO platforms VALUES (" + std::to_string(id++) + ", '" + legacy_platform_hash(platform) +
           "', '" + platform.cpu_model + "', 2, 2, 49152, " + std::to_string(platform.l2_bytes) + ", " +
           std::to_string(platform.l3_bytes) + ", 'cpx', '1.17', '" + platform.compiler + "');";
  sql += R"sql(
    INSERT INTO shapes VALUES (1, 512, 512, 512);
    INSERT INTO measurements (platform_id, shape_id, dtype, threads, layout, k_layers, k_block_factor,
      effective_k_layers, effective_k_block_factor, bm, bn, bk, warmup, reps, mean_s, min_s, stddev_s, screening,
      measured_at)
    VALUES (1, 1, 'f32', 2, 'blocked', 1, 1, 1, 1, 64, 64, 64, 2, 10, 2e-3, 2e-3, 1e-4, 0, 't1'),
           (2, 1, 'f32', 2, 'blocked', 2, 1, 2, 1, 64, 64, 64, 2, 10, 1e-3, 1e-3, 1e-4, 0, 't2'),
           (2, 1, 'f32', 2, 'blocked', 1, 1, 1, 1, 64, 64, 64, 2, 10, 2e-3, 2e-3, 1e-4, 0, 't1'),
           (3, 1, 'f32', 2, 'blocked', 4, 4, 4, 4, 64, 64, 64, 2, 10, 3e-3, 3e-3, 1e-4, 0, 't3');
    INSERT INTO winning_configs VALUES (1, 1, 'f32', 2, 'blocked', 1, 1, 2e-3, 2e-3, 10),
                                       (2, 1, 'f32', 2, 'blocked', 2, 1, 1e-3, 1e-3, 10),
                                       (3, 1, 'f32', 2, 'blocked', 4, 4, 3e-3, 3e-3, 10);
    INSERT INTO calibrations VALUES (1, 100, 10, '2025-01-01T00:00:00Z'), (2, 200, 20, '2025-06-01T00:00:00Z');
    PRAGMA user_version = 3;
    PRAGMA journal_mode = WAL;  -- as every version of sfc-tune left its databases
  )sql";
  raw_sql(path, sql);
  return p;
}

}  // namespace sfc::test
