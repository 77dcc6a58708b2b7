// sfc-tune tune as a process: killed with SIGKILL or interrupted with SIGINT
// mid-run, read by other processes while it writes, sharded and merged.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "sfc/tuning_store.hpp"
#include "test_db_support.hpp"

using sfc::TuningStore;
using sfc::test::CliProcess;
using sfc::test::run_cli;
using sfc::test::TempDir;

namespace {

using ShapeSet = std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>;

// 8 small shapes, 16 configurations each: long enough to be caught mid-run.
const std::vector<std::string> kTuneArgs = {"tune",
                                            "--grid",
                                            "m=64:256:+64 n=64 k=64,128",
                                            "--k-block-factors",
                                            "1:2",
                                            "--reps",
                                            "1",
                                            "--warmup",
                                            "0",
                                            "--threads",
                                            "2"};
constexpr std::size_t kGridShapes = 8, kConfigs = 16;

std::vector<std::string> tune_args(const std::string& db, std::vector<std::string> more = {}) {
  std::vector<std::string> args = kTuneArgs;
  args.insert(args.end(), {"--db", db});
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Shapes with all 16 configurations measured, read as another process would.
ShapeSet complete_shapes(const std::string& db) {
  const TuningStore store(db, TuningStore::Mode::read_only);
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::size_t> count;
  for (const sfc::Platform& p : store.platforms())
    for (const sfc::Measurement& m : store.measurements({p.hash()}))
      ++count[{m.shape.m, m.shape.n, m.shape.k}];
  ShapeSet complete;
  for (auto [shape, n] : count)
    if (n == kConfigs) complete.insert(shape);
  return complete;
}

std::string integrity(const std::string& db) {
  sqlite3* handle = nullptr;
  std::string verdict = "cannot open";
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(handle, "PRAGMA integrity_check", -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW)
      verdict = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    sqlite3_finalize(statement);
  }
  sqlite3_close(handle);
  return verdict;
}

// Starts a tuner and waits until it has committed at least one shape and
// stopped reading would be premature; returns false if it finished first.
bool start_and_wait_for_first_shape(CliProcess& tuner, const std::string& db) {
  for (;;) {
    if (!tuner.running()) return false;
    if (std::filesystem::exists(db)) {
      try {
        if (!complete_shapes(db).empty()) return true;
      } catch (const sfc::Error&) {
        // created but not yet migrated: keep polling
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Each try flushes more cache per measurement, so a fast machine is slowed
// down until the tuner can be caught in the middle of the grid.
const char* kColdBytes[] = {"SFC_COLD_BYTES=8388608", "SFC_COLD_BYTES=33554432", "SFC_COLD_BYTES=134217728"};

}  // namespace

TEST_CASE("tune cli: SIGKILL mid-run leaves an intact database; the rerun measures only the missing shapes") {
  TempDir dir("cli-kill");
  const std::string db = dir.file("t.db");
  bool caught = false;
  for (const char* cold : kColdBytes) {
    std::filesystem::remove(db);
    std::filesystem::remove(db + "-wal");
    std::filesystem::remove(db + "-shm");
    CliProcess tuner(tune_args(db, {"--quiet"}), dir.file("killed"), {cold});
    if (!start_and_wait_for_first_shape(tuner, db)) continue;
    tuner.signal(SIGKILL);
    CHECK(tuner.wait() == 128 + SIGKILL);
    caught = complete_shapes(db).size() < kGridShapes;
    if (caught) break;
  }
  REQUIRE_MESSAGE(caught, "the tuner always finished before it could be killed");

  CHECK(integrity(db) == "ok");
  // More kills at arbitrary moments (mid-transaction included): each leaves
  // an intact database that still holds every shape finished before.
  std::size_t finished = complete_shapes(db).size();
  for (int delay_ms : {3, 17, 41}) {
    CliProcess tuner(tune_args(db, {"--quiet"}), dir.file("killed-again"), {"SFC_COLD_BYTES=8388608"});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    tuner.signal(SIGKILL);
    tuner.wait();
    CHECK(integrity(db) == "ok");
    const std::size_t now = complete_shapes(db).size();
    CHECK(now >= finished);
    finished = now;
  }
  const ShapeSet before = complete_shapes(db);
  CHECK(!before.empty());
  const auto rerun = run_cli(tune_args(db, {"--quiet", "--json"}), dir.file("rerun"));
  REQUIRE(rerun.code == 0);
  const nlohmann::json summary = nlohmann::json::parse(rerun.last_line);
  CHECK(summary["already_done"] == before.size());
  CHECK(summary["tuned"] == kGridShapes - before.size());
  CHECK(complete_shapes(db).size() == kGridShapes);
  CHECK(integrity(db) == "ok");
  // Nothing was measured twice: every shape has exactly its 16 rows.
  const TuningStore store(db, TuningStore::Mode::read_only);
  CHECK(store.measurements({store.platforms().at(0).hash()}).size() == kGridShapes * kConfigs);
}

TEST_CASE("tune cli: SIGINT finishes the measurement, commits, says so and exits 130") {
  TempDir dir("cli-int");
  const std::string db = dir.file("t.db");
  for (const char* cold : kColdBytes) {
    std::filesystem::remove(db);
    CliProcess tuner(tune_args(db, {"--json"}), dir.file("interrupted"), {cold});
    if (!start_and_wait_for_first_shape(tuner, db)) continue;
    tuner.signal(SIGINT);
    const int code = tuner.wait();
    const nlohmann::json summary = nlohmann::json::parse(tuner.last_line());
    if (!summary["interrupted"].get<bool>()) continue;  // the signal came after the last shape
    CHECK(code == 130);
    CHECK(tuner.err().find("interrupted") != std::string::npos);
    CHECK(integrity(db) == "ok");
    CHECK(complete_shapes(db).size() == summary["tuned"].get<std::size_t>());
    // The rerun completes the grid, the interrupted shape included.
    const auto rerun = run_cli(tune_args(db, {"--quiet", "--json"}), dir.file("rerun"));
    CHECK(rerun.code == 0);
    CHECK(complete_shapes(db).size() == kGridShapes);
    return;
  }
  FAIL("the tuner always finished before it could be interrupted");
}

TEST_CASE("tune cli: readers in other processes work while a tuner writes") {
  TempDir dir("cli-read");
  const std::string db = dir.file("t.db");
  CliProcess tuner(tune_args(db, {"--quiet"}), dir.file("writer"), {"SFC_COLD_BYTES=8388608"});
  int reads = 0;
  while (tuner.running()) {
    if (std::filesystem::exists(db)) {
      try {
        complete_shapes(db);
        ++reads;
      } catch (const sfc::Error& e) {
        // Only "not migrated yet" may happen, right at the start.
        CHECK(std::string(e.what()).find("holds no tuning data") != std::string::npos);
      }
      const auto info = run_cli({"db", "info", "--db", db}, dir.file("info"));
      CHECK((info.code == 0 || info.err.find("holds no tuning data") != std::string::npos));
    }
  }
  CHECK(tuner.wait() == 0);
  CHECK(reads > 0);
  CHECK(complete_shapes(db).size() == kGridShapes);
}

TEST_CASE("tune cli: shards merged hold exactly the unsharded run's shapes") {
  TempDir dir("cli-shard");
  // One configuration per shape: the point is which shapes land where.
  auto tune = [&](const std::string& db, const std::string& shard) {
    return run_cli(
        {"tune", "--grid", "m=64:256:+64 n=64 k=64,128", "--k-layers", "1", "--k-block-factors", "1",
         "--reps", "1", "--warmup", "0", "--threads", "2", "--quiet", "--db", db, "--shard", shard},
        dir.file("tune"));
  };
  REQUIRE(tune(dir.file("all.db"), "0/1").code == 0);
  std::vector<std::string> merge = {"merge"};
  for (int i = 0; i < 3; ++i) {
    const std::string db = dir.file("shard" + std::to_string(i) + ".db");
    REQUIRE(tune(db, std::to_string(i) + "/3").code == 0);
    merge.push_back(db);
  }
  merge.insert(merge.end(), {"-o", dir.file("merged.db"), "--json"});
  const auto merged = run_cli(merge, dir.file("merge"));
  REQUIRE(merged.code == 0);
  CHECK(nlohmann::json::parse(merged.last_line)["measurements"] == kGridShapes);

  auto shapes = [](const std::string& db) {
    const TuningStore store(db, TuningStore::Mode::read_only);
    ShapeSet set;
    for (const sfc::Winner& w : store.winners({store.platforms().at(0).hash()}))
      set.emplace(w.shape.m, w.shape.n, w.shape.k);
    return set;
  };
  CHECK(shapes(dir.file("merged.db")) == shapes(dir.file("all.db")));
  CHECK(shapes(dir.file("shard0.db")).size() == 3);  // shapes 0, 3, 6 of 8
}

TEST_CASE(
    "tune cli: --layout row tunes the row-major entry apart, and query and db info tell the layouts apart") {
  TempDir dir("tune-layout");
  const std::string db = dir.file("t.db");
  const std::string grid =
      " --grid 64,128 --k-layers 1,2 --k-block-factors 1 --reps 1 --warmup 0 --threads 2 --quiet";
  auto r = run_cli("tune --db " + db + grid + " --layout row");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("row layout") != std::string::npos);
  r = run_cli("tune --db " + db + grid);  // the blocked entry: not done yet
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("8 of 8 shapes tuned now") != std::string::npos);
  r = run_cli("tune --db " + db + grid + " --layout row");  // resumed: nothing left
  CHECK(r.output.find("0 of 8 shapes tuned now, 8 were already done") != std::string::npos);

  const TuningStore store(db, TuningStore::Mode::read_only);
  const std::string hash = store.platforms().at(0).hash();
  CHECK(store.winners({hash, sfc::DType::f32, 2, sfc::Layout::row_major}).size() == 8);
  CHECK(store.winners({hash, sfc::DType::f32, 2, sfc::Layout::blocked}).size() == 8);
  r = run_cli("db info --db " + db);
  CHECK(r.output.find("row layout: 8 shapes") != std::string::npos);
  r = run_cli("query 64 64 128 --threads 2 --layout row --db " + db);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("row layout") != std::string::npos);
  CHECK(r.output.find("tier exact") != std::string::npos);
  CHECK(run_cli("tune --db " + db + grid + " --layout diagonal").exit_code != 0);
}
