// Deterministic fault injection for the store, driven by SFC_FAULT: the
// process dies, or a write fails, at an exact point, so that tests can walk
// every point of a run instead of killing a child after a guessed sleep.
//
//   SFC_FAULT=count                   at exit, print how many points the run passed
//   SFC_FAULT=crash:write:N           SIGKILL itself before the N-th file write
//   SFC_FAULT=crash:torn-write:N      write half of the N-th write, then SIGKILL
//   SFC_FAULT=crash:sync:N            SIGKILL before the N-th fsync
//   SFC_FAULT=crash:before-commit:N   SIGKILL before the N-th COMMIT runs
//   SFC_FAULT=crash:after-commit:N    SIGKILL right after the N-th COMMIT returned
//   SFC_FAULT=sigterm:after-commit:N  raise SIGTERM right after the N-th COMMIT (also sigint,
//                                     sighup; at write, sync, before-commit too)
//   SFC_FAULT=io:fail-write:N         the N-th write fails (SQLITE_IOERR_WRITE)
//   SFC_FAULT=io:full:N               the N-th write and every later one find the disk full
//
// Writes and syncs are counted below SQLite, in a VFS that wraps the default
// one (database, WAL and journal files alike, every connection of the
// process); commits at sqlite::Transaction::commit(). Without SFC_FAULT
// nothing is installed and the store runs on SQLite's own VFS untouched.
// docs/reliability.md has the walks the tests make with it.
#pragma once

namespace sfc::fault {

// Reads SFC_FAULT once and, when set, installs the VFS as SQLite's default.
// Called before every database is opened; throws sfc::Error for a malformed
// SFC_FAULT (naming what it expected).
void install();

// The commit points (sqlite::Transaction::commit calls them).
void before_commit();
void after_commit();

}  // namespace sfc::fault
