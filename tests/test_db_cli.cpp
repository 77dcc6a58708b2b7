// Bad input to the store commands: one clear line on stderr, exit code 2,
// and no file touched. And --json: the last line of stdout is one object.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sfc/tuning_store.hpp"
#include "test_db_support.hpp"

using sfc::test::run_cli;
using sfc::test::slurp;
using sfc::test::TempDir;

namespace {

// A tiny tuned database to export, import and merge.
std::string tuned_db(const TempDir& dir, const std::string& name = "t.db") {
  const std::string db = dir.file(name);
  const auto run = run_cli({"tune", "--grid", "64", "--k-layers", "1:2", "--k-block-factors", "1", "--reps",
                            "1", "--warmup", "0", "--threads", "2", "--quiet", "--db", db},
                           dir.file("tune"));
  REQUIRE(run.code == 0);
  return db;
}

// Runs a command that must fail as bad input; returns its stderr.
std::string refused(const TempDir& dir, const std::vector<std::string>& args) {
  const auto run = run_cli(args, dir.file("refused"));
  CAPTURE(run.err);
  CHECK(run.code == 2);
  CHECK(run.err.starts_with("sfc-tune: error: "));
  CHECK(run.err.find('\n') == run.err.size() - 1);  // one line
  return run.err;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("store cli: malformed grids and shape files name the problem") {
  TempDir dir("cli-bad");
  const std::string db = dir.file("t.db");
  CHECK(mentions(refused(dir, {"tune", "--grid", "m=1:9:y2 n=1 k=1", "--db", db}), "the step y2"));
  CHECK(mentions(refused(dir, {"tune", "--grid", "64", "--shapes", "x", "--db", db}), "exactly one of"));
  CHECK(mentions(refused(dir, {"tune", "--db", db}), "exactly one of"));
  sfc::test::write_file(dir.file("bad.shapes"), "64 64 64\n64 sixty 64\n");
  CHECK(mentions(refused(dir, {"tune", "--shapes", dir.file("bad.shapes"), "--db", db}),
                 "bad.shapes:2: N 'sixty'"));
  CHECK(mentions(refused(dir, {"tune", "--grid", "64", "--shard", "3/3", "--db", db}), "shard index"));
  CHECK(mentions(refused(dir, {"tune", "--grid", "64", "--k-layers", "0", "--db", db}), "--k-layers"));
  CHECK(mentions(refused(dir, {"tune", "--grid", "64", "--dtype", "f16", "--db", db}), "f16"));
  CHECK(mentions(refused(dir, {"tune", "--random", "5", "--range", "9:3", "--db", db}), "backwards"));
  CHECK_FALSE(std::filesystem::exists(db));  // nothing was created for bad input
}

TEST_CASE("store cli: files that are not tuning databases are refused and left as they were") {
  TempDir dir("cli-bad");
  const std::string text = dir.file("notes.db");
  sfc::test::write_file(text, "these are my notes, not a database\n");
  // A valid (empty) export to import: the file is checked before the database.
  { sfc::TuningStore empty(dir.file("empty.db"), sfc::TuningStore::Mode::create); }
  REQUIRE(sfc::test::run_cli({"export", "--db", dir.file("empty.db"), "--all", "-o", dir.file("x.csv")},
                             dir.file("export"))
              .code == 0);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"tune", "--grid", "64", "--db", text},
                                               {"db", "info", "--db", text},
                                               {"export", "--db", text, "-o", dir.file("x.csv")},
                                               {"import", dir.file("x.csv"), "--db", text},
                                               {"merge", text, "-o", dir.file("out.db")}}) {
    CHECK(mentions(refused(dir, args), "not an SQLite database"));
  }
  CHECK(slurp(text) == "these are my notes, not a database\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("out.db")));
  CHECK(mentions(refused(dir, {"db", "info", "--db", dir.file("absent.db")}), "no tuning database"));
}

TEST_CASE("store cli: unwritable outputs and unimportable files fail without losing data") {
  TempDir dir("cli-bad");
  const std::string db = tuned_db(dir);
  const std::string before = slurp(db);
  CHECK(mentions(refused(dir, {"export", "--db", db, "-o", dir.file("no/such/dir/x.csv")}), "cannot write"));
  CHECK(mentions(refused(dir, {"export", "--db", db, "--format", "xml", "-o", dir.file("x")}), "xml"));
  REQUIRE(run_cli({"export", "--db", db, "-o", dir.file("winners.csv")}, dir.file("export")).code == 0);
  CHECK(mentions(refused(dir, {"import", dir.file("winners.csv"), "--db", db}), "winners only"));
  CHECK(mentions(refused(dir, {"merge", db, "-o", db}), "also an input"));
  CHECK(slurp(db) == before);
}

TEST_CASE("store cli: --json puts one summary object on the last line of stdout") {
  TempDir dir("cli-json");
  const std::string db = tuned_db(dir);
  auto summary = [&](const std::vector<std::string>& args) {
    const auto run = run_cli(args, dir.file("json"));
    CAPTURE(run.err);
    REQUIRE(run.code == 0);
    return nlohmann::json::parse(run.last_line);
  };
  CHECK(summary({"tune", "--grid", "64", "--k-layers", "1:2", "--k-block-factors", "1", "--threads", "2",
                 "--quiet", "--json", "--db", db})["already_done"] == 1);
  CHECK(summary({"export", "--db", db, "--all", "--format", "json", "-o", dir.file("all.json"),
                 "--json"})["measurements"] == 2);
  CHECK(summary({"import", dir.file("all.json"), "--db", dir.file("copy.db"), "--json"})["measurements"] ==
        2);
  CHECK(summary({"merge", db, dir.file("copy.db"), "-o", dir.file("merged.db"), "--json"})["duplicates"] ==
        2);
  const nlohmann::json info = summary({"db", "info", "--db", dir.file("merged.db"), "--json"});
  CHECK(info["platforms"].size() == 1);
  CHECK(info["platforms"][0]["results"][0]["shapes"] == 1);
  CHECK(info["platforms"][0]["results"][0]["measurements"] == 2);
}
