// The versioned schema of a tuning database and its migrations.
#pragma once
#include "sqlite.hpp"

namespace sfc::schema {

inline constexpr int kVersion = 3;  // what this build writes and reads

// Checks that `db` is an sfc-tune database this build understands, or an empty
// file that may become one, and that it is not corrupt. Returns its schema
// version (0: empty). Throws sfc::Error otherwise; reads only.
int check(sqlite::Database& db);

// Brings an empty or older database to `target` (a version before kVersion
// only to build old files for the migration tests) in one transaction.
void migrate(sqlite::Database& db, int target = kVersion);

// Recomputes the stored winner of one (platform id, shape id, dtype, threads,
// layout) from its measurements: bind ?1..?5 and run it after adding measurements.
sqlite::Statement prepare_refresh_winner(sqlite::Database& db);

}  // namespace sfc::schema
