// Deterministic fault injection (SFC_FAULT, db/src/fault_injection.hpp): a
// run is repeated once per point it passes -- every file write, torn write,
// fsync and commit -- dying or failing exactly there, and what it leaves must
// be an intact database holding every transaction committed before, which
// the same command then completes, measuring exactly what is missing.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "sfc/tuning_store.hpp"
#include "test_db_sqlite.hpp"
#include "test_db_support.hpp"

using sfc::TuningStore;
using sfc::test::CliRun;
using sfc::test::TempDir;

namespace {

// Two shapes of two configurations: a new database, its platform and two
// shape transactions, every one of them walked.
constexpr std::size_t kShapes = 2, kConfigs = 2;
std::vector<std::string> tune_args(const std::string& db) {
  return {"tune",       "--grid",  "m=64,96 n=64 k=64",
          "--k-layers", "1,2",     "--k-block-factors",
          "1",          "--reps",  "1",
          "--warmup",   "0",       "--threads",
          "2",          "--quiet", "--json",
          "--db",       db};
}

CliRun run(const TempDir& dir, const std::vector<std::string>& args, const std::string& fault = "") {
  static int count = 0;
  std::vector<std::string> environment = {"SFC_COLD_BYTES=1048576"};
  environment.push_back("SFC_FAULT=" + fault);  // empty: none (and none inherited)
  return sfc::test::run_cli(args, dir.file("run" + std::to_string(count++)), environment);
}

struct PointCounts {
  int writes = 0, syncs = 0, commits = 0;
};

// How many points a clean run of `args` passes (SFC_FAULT=count).
PointCounts count_points(const TempDir& dir, const std::vector<std::string>& args) {
  const CliRun r = run(dir, args, "count");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  std::smatch m;
  REQUIRE_MESSAGE(
      std::regex_search(r.err, m, std::regex(R"(sfc-fault: (\d+) writes, (\d+) syncs, (\d+) commits)")),
      r.err);
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

void remove_database(const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(db + suffix);
}

// Measurements per shape, read as another process would; none for a database
// that was never created or never got its schema.
std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::size_t> rows_per_shape(
    const std::string& db) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::size_t> rows;
  if (!std::filesystem::exists(db) || sfc::test::raw_value(db, "PRAGMA user_version") == "0") return rows;
  const TuningStore store(db, TuningStore::Mode::read_only);
  for (const sfc::Platform& p : store.platforms())
    for (const sfc::Measurement& m : store.measurements({p.hash()}))
      ++rows[{m.shape.m, m.shape.n, m.shape.k}];
  return rows;
}

// What a tuner killed (or failed) at any point must leave: an intact file,
// each shape all or nothing; and the rerun measures exactly the rest.
void check_left_and_resumed(const TempDir& dir, const std::string& db, const std::string& where) {
  INFO(where);
  if (std::filesystem::exists(db)) CHECK(sfc::test::integrity(db) == "ok");
  const auto before = rows_per_shape(db);
  for (const auto& [shape, rows] : before) CHECK(rows == kConfigs);
  const CliRun rerun = run(dir, tune_args(db));
  REQUIRE_MESSAGE(rerun.code == 0, rerun.err);
  const nlohmann::json summary = nlohmann::json::parse(rerun.last_line);
  CHECK(summary["already_done"] == before.size());
  CHECK(summary["measurements"] == (kShapes - before.size()) * kConfigs);
  const auto after = rows_per_shape(db);
  CHECK(after.size() == kShapes);
  for (const auto& [shape, rows] : after) CHECK(rows == kConfigs);  // nothing measured twice
}

}  // namespace

TEST_CASE("faults: a tuner killed at every write, torn write, sync and commit leaves an intact database") {
  TempDir dir("faults-tune");
  const std::string db = dir.file("t.db");
  const PointCounts points = count_points(dir, tune_args(db));
  CHECK(points.commits >= 1 + int{kShapes});  // the platform, then one per shape
  const std::vector<std::pair<std::string, int>> walks = {{"crash:write:", points.writes},
                                                          {"crash:torn-write:", points.writes},
                                                          {"crash:sync:", points.syncs},
                                                          {"crash:before-commit:", points.commits},
                                                          {"crash:after-commit:", points.commits}};
  int walked = 0;
  for (const auto& [point, count] : walks)
    for (int n = 1; n <= count; ++n) {
      remove_database(db);
      const CliRun crashed = run(dir, tune_args(db), point + std::to_string(n));
      CHECK_MESSAGE(crashed.code == 128 + SIGKILL, point, n, crashed.err);
      check_left_and_resumed(dir, db, point + std::to_string(n));
      ++walked;
    }
  MESSAGE(walked << " fault points walked (" << points.writes << " writes, " << points.syncs << " syncs, "
                 << points.commits << " commits)");
}

TEST_CASE("faults: a failed write or a full disk at any point is a clear error and loses nothing committed") {
  TempDir dir("faults-io");
  const std::string db = dir.file("t.db");
  const PointCounts points = count_points(dir, tune_args(db));
  for (const std::string kind : {"io:fail-write:", "io:full:"})
    for (int n = 1; n <= points.writes; ++n) {
      remove_database(db);
      const CliRun failed = run(dir, tune_args(db), kind + std::to_string(n));
      // A write SQLite can do without (a checkpoint at close) fails silently;
      // any other is the command's failure, said in one line.
      if (failed.code != 0) {
        CHECK_MESSAGE(failed.code == 2, kind, n, failed.err);
        const bool said = failed.err.find(kind == "io:full:" ? "database or disk is full"
                                                             : "disk I/O error") != std::string::npos;
        CHECK_MESSAGE(said, kind, n, failed.err);
        CHECK(failed.err.find("internal error") == std::string::npos);
      }
      check_left_and_resumed(dir, db, kind + std::to_string(n));
    }
}

namespace {

// A database of `shapes` tuned here, exported with every measurement.
std::string tuned_export(const TempDir& dir, const std::string& grid, const std::string& name) {
  const std::string db = dir.file(name + ".db"), out = dir.file(name + ".json");
  std::vector<std::string> args = tune_args(db);
  args[2] = grid;
  REQUIRE(run(dir, args).code == 0);
  REQUIRE(run(dir, {"export", "--db", db, "--format", "json", "--all", "-o", out}).code == 0);
  return out;
}

std::size_t measurement_count(const std::string& db) {
  std::size_t total = 0;
  for (const auto& [shape, rows] : rows_per_shape(db)) total += rows;
  return total;
}

}  // namespace

TEST_CASE("faults: an import or a merge killed at any point leaves all of it or none") {
  TempDir dir("faults-import");
  const std::string theirs = tuned_export(dir, "m=64,96 n=64 k=64", "theirs");
  const std::string mine = dir.file("mine.db"), seed = dir.file("seed.db");
  std::vector<std::string> seed_args = tune_args(seed);
  seed_args[2] = "m=128 n=64 k=64";
  REQUIRE(run(dir, seed_args).code == 0);  // a database of one other shape to import into
  const std::size_t before = measurement_count(seed), added = kShapes * kConfigs;

  for (const std::vector<std::string>& command : {std::vector<std::string>{"import", theirs, "--db", mine},
                                                  {"merge", dir.file("theirs.db"), "-o", mine}}) {
    auto fresh_copy = [&] {
      remove_database(mine);
      std::filesystem::copy_file(seed, mine);
    };
    fresh_copy();
    const PointCounts points = count_points(dir, command);
    for (const std::string kind : {"crash:write:", "crash:torn-write:", "crash:after-commit:"})
      for (int n = 1; n <= (kind == "crash:after-commit:" ? points.commits : points.writes); ++n) {
        INFO(command[0], " ", kind, n);
        fresh_copy();
        CHECK(run(dir, command, kind + std::to_string(n)).code == 128 + SIGKILL);
        CHECK(sfc::test::integrity(mine) == "ok");
        const std::size_t left = measurement_count(mine);
        CHECK((left == before || left == before + added));
        const CliRun again = run(dir, command);  // repeating adds what is missing, nothing twice
        CHECK_MESSAGE(again.code == 0, again.err);
        CHECK(measurement_count(mine) == before + added);
      }
  }
}

TEST_CASE(
    "faults: a version 3 database killed at any point of its migration opens as version 3 or 4, whole") {
  TempDir dir("faults-migrate");
  const std::string seed = dir.file("v3-seed.db"), db = dir.file("v3.db");
  const auto platforms = sfc::test::make_version3_database(seed, sfc::test::sample_platform());
  sfc::Platform twin = platforms.twin_a;
  twin.l3_bytes = 0;  // what the migration re-keys the twins to
  const std::vector<std::string> migrate = {"import", tuned_export(dir, "m=64 n=64 k=64", "new"), "--db", db};
  auto fresh_copy = [&] {
    remove_database(db);
    std::filesystem::copy_file(seed, db);
  };
  fresh_copy();
  const PointCounts points = count_points(dir, migrate);
  for (int n = 1; n <= points.writes; ++n) {
    INFO("crash:write:", n);
    fresh_copy();
    CHECK(run(dir, migrate, "crash:write:" + std::to_string(n)).code == 128 + SIGKILL);
    CHECK(sfc::test::integrity(db) == "ok");
    const std::string version = sfc::test::raw_value(db, "PRAGMA user_version");
    CHECK((version == "3" || version == "4"));
    if (version == "3") CHECK(sfc::test::raw_value(db, "SELECT count(*) FROM measurements") == "4");
    REQUIRE(run(dir, migrate).code == 0);
    const TuningStore store(db, TuningStore::Mode::read_only);
    CHECK(store.platforms().size() == 3);                  // the twins as one, the other, and this machine's
    CHECK(store.measurements({twin.hash()}).size() == 2);  // the twins' shared measurement kept once
  }
}
