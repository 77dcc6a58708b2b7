// The versioned schema of a tuning database and its migrations.
#pragma once
#include <cstdint>
#include <string>

#include "sqlite.hpp"

namespace sfc::schema {

inline constexpr int kVersion = 4;  // what this build writes and reads

// PRAGMA application_id of every sfc-tune database: "SFCT".
inline constexpr std::int64_t kApplicationId = 0x53464354;

// What decides whether a file is ours, read in one snapshot.
struct Snapshot {
  std::int64_t application_id = 0;
  std::int64_t user_version = 0;
  std::int64_t schema_objects = 0;  // rows of sqlite_schema: tables, views, indexes
};

// The decision itself, a pure function of the snapshot: the schema version
// (0: an empty file that the first read-write open turns into a tuning
// database), or sfc::Error naming `path` (another program's database, a
// version this build does not know).
int version_of(const Snapshot& snapshot, const std::string& path);

// How a database is opened (TuningStore::Mode): a read-only open never
// writes; the others migrate an older schema, and create makes the file.
enum class OpenMode { read_only, read_write, create };

// Opens `path` the way every TuningStore does: refuses what is not a regular
// file or not ours (check()), a read-only open of an empty or older file
// (with what to run instead); otherwise switches to WAL with FULL syncs and
// migrates to kVersion. Foreign keys on. Throws sfc::Error.
sqlite::Database open(const std::string& path, OpenMode mode);

// Checks that `db` is an sfc-tune database this build understands, or an empty
// file that may become one, and that it is not corrupt, all in one read
// transaction. Returns its schema version (0: empty). Throws sfc::Error
// otherwise; reads only.
int check(sqlite::Database& db);

// Brings an empty or older database to `target` (a version before kVersion
// only to build old files for the migration tests) in one transaction.
void migrate(sqlite::Database& db, int target = kVersion);

// Recomputes the stored winner of one (platform id, shape id, dtype, threads,
// layout) from its measurements: bind ?1..?5 and run it after adding measurements.
sqlite::Statement prepare_refresh_winner(sqlite::Database& db);

}  // namespace sfc::schema
