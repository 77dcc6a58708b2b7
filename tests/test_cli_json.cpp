// With --json, stdout is exactly one JSON document (`sfc-tune ... --json | jq`):
// every command's human-readable lines go to stderr then.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_db_support.hpp"

using sfc::test::TempDir;

TEST_CASE("cli: with --json every command's stdout parses as one JSON document") {
  TempDir dir("cli-json");
  const std::string db = dir.file("t.db"), all = dir.file("all.json");
  const std::vector<std::vector<std::string>> commands = {
      {"gemm", "64", "64", "64", "--reps", "1", "--warmup", "0", "--check"},
      {"tune", "--grid", "m=64,256 n=64 k=64", "--k-layers", "1,2", "--k-block-factors", "1", "--reps", "1",
       "--warmup", "0", "--threads", "2", "--quiet", "--db", db},
      {"calibrate", "--threads", "2", "--db", db},
      {"export", "--db", db, "--all", "--format", "json", "-o", all},
      {"import", all, "--db", dir.file("copy.db")},
      {"merge", db, "-o", dir.file("merged.db")},
      {"db", "info", "--db", db},
      {"query", "100", "64", "64", "--threads", "2", "--db", db},
      {"evaluate", "--db", db, "--train-max", "64", "--threads", "2"},
      {"bench", "--grid", "64", "--vs", "none", "--config", "default", "--reps", "1", "--passes", "1",
       "--min-time", "0", "--threads", "2", "--db", db}};
  int i = 0;
  for (std::vector<std::string> args : commands) {
    args.push_back("--json");
    const sfc::test::CliRun r = sfc::test::run_cli(args, dir.file("run" + std::to_string(i++)));
    CAPTURE(args[0]);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    nlohmann::json document;
    CHECK_NOTHROW(document = nlohmann::json::parse(r.out));
    CHECK(document.is_object());
    CHECK_FALSE(r.err.empty());  // the human-readable result went to stderr
  }
}

TEST_CASE("cli: export -o - writes the export to stdout and nothing else there, with --json it is refused") {
  TempDir dir("cli-dash");
  const std::string db = dir.file("t.db");
  REQUIRE(sfc::test::run_cli({"tune", "--grid", "m=64 n=64 k=64", "--k-layers", "1", "--k-block-factors", "1",
                              "--reps", "1", "--warmup", "0", "--threads", "2", "--quiet", "--db", db},
                             dir.file("tune"))
              .code == 0);
  auto r = sfc::test::run_cli({"export", "--db", db, "--format", "json", "-o", "-"}, dir.file("dash"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(nlohmann::json::parse(r.out)["format"] == "sfc-tune-export");
  CHECK_FALSE(std::filesystem::exists(dir.file("-")));
  r = sfc::test::run_cli({"export", "--db", db, "-o", "-", "--json"}, dir.file("both"));
  CHECK(r.code == 2);
  CHECK(r.err.find("use one of them") != std::string::npos);
}
