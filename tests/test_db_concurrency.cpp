// Several tuners on one database, with readers running all along: what a
// Slurm array or a few terminals on one machine do. Every configuration is
// measured once, whichever tuner gets to it; no command sees "database is
// locked"; the winners are what one tuner alone would have chosen.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "sfc/tuning_store.hpp"
#include "test_db_sqlite.hpp"
#include "test_db_support.hpp"

using sfc::TuningStore;
using sfc::test::CliProcess;
using sfc::test::TempDir;

namespace {

constexpr std::size_t kConfigs = 4;  // --k-layers 1:4 --k-block-factors 1

std::vector<std::string> tune_args(const std::string& db, const std::string& m_list) {
  return {"tune",       "--grid",  "m=" + m_list + " n=64 k=64,128",
          "--k-layers", "1:4",     "--k-block-factors",
          "1",          "--reps",  "2",
          "--warmup",   "0",       "--threads",
          "2",          "--quiet", "--json",
          "--db",       db};
}

using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

// Tuners on overlapping grids started at once, and readers of every kind in a
// loop until the last tuner ends; every reader's failure is reported.
void run_together(const TempDir& dir, const std::vector<std::string>& m_lists, std::size_t shapes_in_union) {
  const std::string db = dir.file("shared.db");
  std::vector<std::unique_ptr<CliProcess>> tuners;
  for (std::size_t i = 0; i < m_lists.size(); ++i)
    tuners.push_back(std::make_unique<CliProcess>(tune_args(db, m_lists[i]),
                                                  dir.file("tuner" + std::to_string(i)),
                                                  std::vector<std::string>{"SFC_COLD_BYTES=4194304"}));
  const std::vector<std::vector<std::string>> readers = {
      {"db", "info", "--db", db},
      {"query", "96", "64", "100", "--db", db, "--threads", "2"},
      {"export", "--db", db, "--format", "csv", "--all", "-o", dir.file("export.csv")}};
  int reads = 0;
  for (bool any_running = true; any_running;) {
    any_running = false;
    for (auto& tuner : tuners) any_running = tuner->running() || any_running;
    for (const auto& args : readers) {
      const auto r = sfc::test::run_cli(args, dir.file("reader"));
      // Before the first tuner has created the database there is nothing to read.
      const bool not_yet = r.err.find("no tuning database") != std::string::npos ||
                           r.err.find("No such file") != std::string::npos ||
                           r.err.find("no platform") != std::string::npos ||
                           r.err.find("no tuned") != std::string::npos;
      CHECK_MESSAGE((r.code == 0 || not_yet), args[0], ": ", r.err);
      CHECK_MESSAGE(r.err.find("database is locked") == std::string::npos, r.err);
      ++reads;
    }
  }
  std::int64_t measured = 0;
  for (auto& tuner : tuners) {
    CHECK_MESSAGE(tuner->wait() == 0, tuner->err());
    CHECK(tuner->err().find("database is locked") == std::string::npos);
    measured += nlohmann::json::parse(tuner->last_line())["measurements"].get<std::int64_t>();
  }
  MESSAGE(m_lists.size() << " tuners, " << reads << " reads meanwhile");

  // Each configuration measured once, by whichever tuner got there first.
  CHECK(measured == static_cast<std::int64_t>(shapes_in_union * kConfigs));
  const TuningStore store(db, TuningStore::Mode::read_only);
  const std::string hash = store.platforms().at(0).hash();
  std::map<Key, std::vector<sfc::Measurement>> by_shape;
  for (const sfc::Measurement& m : store.measurements({hash}))
    by_shape[{m.shape.m, m.shape.n, m.shape.k}].push_back(m);
  CHECK(by_shape.size() == shapes_in_union);
  for (const auto& [key, rows] : by_shape) {
    CHECK(rows.size() == kConfigs);
    // The winner is the single tuner's rule over these rows: fastest min_s,
    // ties to the fewest layers.
    const sfc::Measurement* best = &rows.front();
    for (const sfc::Measurement& m : rows)
      if (m.min_s < best->min_s || (m.min_s == best->min_s && m.k_layers < best->k_layers)) best = &m;
    const auto winner = store.winner({hash, sfc::DType::f32, 2, sfc::Layout::blocked,
                                      sfc::GemmShape{std::get<0>(key), std::get<1>(key), std::get<2>(key)}});
    REQUIRE(winner);
    CHECK(winner->k_layers == best->k_layers);
  }
  CHECK(sfc::test::integrity(db) == "ok");
}

}  // namespace

TEST_CASE("concurrency: two tuners on overlapping grids measure every configuration once") {
  TempDir dir("concurrent-2");
  run_together(dir, {"64,96,128,160", "96,128,160,192"}, 10);
}

TEST_CASE("concurrency: four tuners on overlapping grids, readers all along, nothing twice, nothing locked") {
  TempDir dir("concurrent-4");
  run_together(dir, {"64,96,128", "96,128,160", "128,160,192", "192,64"}, 10);
}
