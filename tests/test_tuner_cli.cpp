// sfc-tune tune as a process: interrupted by a signal at every commit, read by
// other processes while it writes, sharded and merged.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "sfc/tuning_store.hpp"
#include "test_db_sqlite.hpp"
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

}  // namespace

TEST_CASE(
    "tune cli: SIGINT, SIGTERM and SIGHUP at every commit stop the run there, committed, exit 128 + it") {
  // Raised by the fault hook (SFC_FAULT, db/src/fault_injection.hpp) at an
  // exact commit, so no test depends on catching a tuner mid-run; kill -9 at
  // every point is walked in test_db_faults.cpp.
  TempDir dir("cli-signals");
  const std::string db = dir.file("t.db");
  const std::vector<std::string> args = {"tune",
                                         "--grid",
                                         "m=64,96,128 n=64 k=64",
                                         "--k-layers",
                                         "1,2",
                                         "--k-block-factors",
                                         "1",
                                         "--reps",
                                         "1",
                                         "--warmup",
                                         "0",
                                         "--threads",
                                         "2",
                                         "--json",
                                         "--db",
                                         db};
  constexpr std::size_t kShapes = 3;
  auto fresh = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  };
  // The last kShapes commits record the shapes; those before create the
  // database and add the platform.
  fresh();
  const auto counted = run_cli(args, dir.file("count"), {"SFC_COLD_BYTES=1048576", "SFC_FAULT=count"});
  REQUIRE(counted.code == 0);
  const std::size_t commits = std::stoul(counted.err.substr(counted.err.find(" syncs, ") + 8));
  REQUIRE(commits > kShapes);
  const std::size_t first_shape_commit = commits - kShapes + 1;
  const std::vector<std::pair<std::string, int>> signals = {
      {"sigint", SIGINT}, {"sigterm", SIGTERM}, {"sighup", SIGHUP}};
  for (const auto& [name, number] : signals)
    for (const std::string point : {"before-commit", "after-commit"})
      for (std::size_t commit = 1; commit < commits; ++commit) {
        INFO(name, ":", point, ":", commit);
        fresh();
        const auto r = run_cli(
            args, dir.file("signalled"),
            {"SFC_COLD_BYTES=1048576", "SFC_FAULT=" + name + ":" + point + ":" + std::to_string(commit)});
        CHECK(r.code == 128 + number);
        CHECK(r.err.find("interrupted") != std::string::npos);
        const nlohmann::json summary = nlohmann::json::parse(r.last_line);
        CHECK(summary["interrupted"] == true);
        // The shape being committed when the signal came is committed too.
        const std::size_t tuned = commit < first_shape_commit ? 0 : commit - first_shape_commit + 1;
        CHECK(summary["tuned"] == tuned);
        CHECK(sfc::test::integrity(db) == "ok");
        const auto rerun = run_cli(args, dir.file("rerun"), {"SFC_COLD_BYTES=1048576", "SFC_FAULT="});
        CHECK(rerun.code == 0);
        CHECK(nlohmann::json::parse(rerun.last_line)["tuned"] == kShapes - tuned);
      }
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
