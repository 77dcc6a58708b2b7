// Regression tests for inputs an adversarial run found to crash, hang, fail
// with an internal error or lose data: each now gets one clear line and
// exit code 2 (or an sfc::Error), and nothing is written or created.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <future>
#include <string>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/tuning_store.hpp"
#include "sfc/tuning_table.hpp"
#include "test_db_sqlite.hpp"
#include "test_db_support.hpp"

using sfc::test::TempDir;

namespace {

using Run = sfc::test::CliRun;

Run cli(const TempDir& dir, std::vector<std::string> args) {
  static int count = 0;
  return sfc::test::run_cli(args, dir.file("cli" + std::to_string(count++)));
}

// One line on stderr, exit code 2, and not an internal error.
void check_refused(const Run& r, const std::string& reason) {
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find(reason) != std::string::npos, r.err);
  CHECK(r.err.find("internal error") == std::string::npos);
}

// A database with 8 measured shapes of 2 configurations each.
std::string tuned_database(const TempDir& dir) {
  const std::string db = dir.file("t.db");
  const Run r =
      cli(dir, {"tune", "--grid", "m=64,128 n=64 k=64,128", "--k-layers", "1,2", "--k-block-factors", "1",
                "--reps", "1", "--warmup", "0", "--threads", "2", "--quiet", "--db", db});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return db;
}

}  // namespace

TEST_CASE("hardening: a FIFO without a writer and /dev/zero are refused at once, not read or waited on") {
  TempDir dir("hard-fifo");
  const std::string fifo = dir.file("pipe.table");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    CAPTURE(path);
    CHECK_THROWS_WITH_AS(sfc::TuningTable::load(path), doctest::Contains("not a regular file"), sfc::Error);
    check_refused(cli(dir, {"query", "64", "64", "64", "--table", path}), "not a regular file");
    check_refused(cli(dir, {"import", path, "--db", dir.file("new.db")}), "not a regular file");
    check_refused(cli(dir, {"db", "info", "--db", path}), "not a regular file");
    check_refused(cli(dir, {"export", "--db", path, "-o", dir.file("x.csv")}), "not a regular file");
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
}

TEST_CASE("hardening: export into a device writes to it and leaves the device node in place") {
  TempDir dir("hard-dev");
  const std::string db = tuned_database(dir);
  const Run r = cli(dir, {"export", "--db", db, "--format", "csv", "-o", "/dev/null"});
  CHECK_MESSAGE(r.code == 0, r.err);
  struct stat info {};
  REQUIRE(stat("/dev/null", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
  check_refused(cli(dir, {"export", "--db", db, "-o", db}), "is the database");
  CHECK(sfc::TuningStore(db, sfc::TuningStore::Mode::read_only)
            .measurements({sfc::TuningStore(db, sfc::TuningStore::Mode::read_only).platforms().at(0).hash()})
            .size() == 8);
}

TEST_CASE("hardening: crafted JSON exports get a clear refusal, and a failed import creates nothing") {
  TempDir dir("hard-json");
  const std::string deep = "{\"format\": \"sfc-tune-export\", \"version\": " + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  const std::vector<std::pair<std::string, std::string>> files = {
      {deep, "nested deeper"},
      {R"({"format": 5, "version": 3})", "sfc-tune export"},
      {R"({"format": "sfc-tune-export", "version": 3, "measurements_included": "yes", "platforms": []})",
       "not a valid sfc-tune export"},
      {R"({"format": "sfc-tune-export", "version": 3, "x": 1e999})", "not valid JSON"},
      {R"({"format": "sfc-tune-export", "version": 3, "measurements_included": true, "platforms": [{"hash": "0",
          "cpu_model": "x", "cores": 2, "threads": 2, "l1d_bytes": 1, "l2_bytes": 9223372036854775807,
          "l3_bytes": 1, "numa_nodes": 1, "isa": "cpx", "libxsmm_version": "1", "compiler": "c",
          "measurements": []}]})",
       "out of range"}};
  for (const auto& [text, reason] : files) {
    sfc::test::write_file(dir.file("bad.json"), text);
    check_refused(cli(dir, {"import", dir.file("bad.json"), "--db", dir.file("new.db")}), reason);
    CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
  }
}

TEST_CASE("hardening: a failed import leaves an older database unmigrated") {
  TempDir dir("hard-migrate");
  const std::string db = tuned_database(dir);
  sfc::test::raw_sql(db, "PRAGMA user_version = 3");  // pretend it is of the previous schema
  sfc::test::write_file(dir.file("bad.csv"), "not,an,export\n1,2,3\n");
  check_refused(cli(dir, {"import", dir.file("bad.csv"), "--db", db}), "not an sfc-tune measurement export");
  CHECK(sfc::test::raw_value(db, "PRAGMA user_version") == "3");
}

TEST_CASE("hardening: two imports creating one database at once both succeed") {
  TempDir dir("hard-two");
  const std::string source = tuned_database(dir);
  REQUIRE(
      cli(dir, {"export", "--db", source, "--all", "--format", "json", "-o", dir.file("all.json")}).code ==
      0);
  for (int round = 0; round < 4; ++round) {
    const std::string db = dir.file("shared" + std::to_string(round) + ".db");
    auto first = std::async(std::launch::async, [&] {
      return cli(dir, {"import", dir.file("all.json"), "--db", db});
    });
    auto second = std::async(std::launch::async, [&] {
      return cli(dir, {"import", dir.file("all.json"), "--db", db});
    });
    const Run a = first.get(), b = second.get();
    CHECK_MESSAGE(a.code == 0, a.err);
    CHECK_MESSAGE(b.code == 0, b.err);
    const sfc::TuningStore store(db, sfc::TuningStore::Mode::read_only);
    CHECK(store.measurements({store.platforms().at(0).hash()}).size() == 8);  // once, not twice
  }
}

TEST_CASE("hardening: a database edited past its CHECKs and an absurd table count are errors, not crashes") {
  TempDir dir("hard-edit");
  const std::string db = tuned_database(dir);
  sfc::test::raw_sql(
      db, "PRAGMA ignore_check_constraints = 1; UPDATE measurements SET k_layers = 99 WHERE id = 1;");
  // A reader that may write the file opens it read-write (to clean up its
  // -wal and -shm), where SQLite's quick_check sees the CHECK failure at open;
  // one that may not write it refuses the values on reading them.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"query", "64", "64", "64", "--db", db, "--threads", "2"},
        {"export", "--db", db, "--format", "table", "-o", dir.file("x.table")}})
    check_refused(cli(dir, args), "CHECK constraint failed");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.table")));
  REQUIRE(::chmod(db.c_str(), 0444) == 0);
  if (::access(db.c_str(), W_OK) != 0)  // root may write it whatever its mode
    check_refused(cli(dir, {"query", "64", "64", "64", "--db", db, "--threads", "2"}), "inconsistent");
  REQUIRE(::chmod(db.c_str(), 0644) == 0);

  sfc::TuningTable table;
  table.platform = sfc::test::sample_platform();
  table.save(dir.file("t.table"));
  std::string text = sfc::test::slurp(dir.file("t.table"));
  text.replace(text.find("shapes 0"), 8, "shapes 9223372036854775807");
  sfc::test::write_file(dir.file("t.table"), text);
  CHECK_THROWS_WITH_AS(sfc::TuningTable::load(dir.file("t.table")), doctest::Contains("truncated"),
                       sfc::Error);
}

TEST_CASE("hardening: what a later command would refuse is refused where it enters, naming the value") {
  TempDir dir("hard-bounds");
  const std::string db = tuned_database(dir);
  REQUIRE(cli(dir, {"export", "--db", db, "--format", "json", "--all", "-o", dir.file("all.json")}).code ==
          0);
  REQUIRE(cli(dir, {"export", "--db", db, "--format", "csv", "--all", "-o", dir.file("all.csv")}).code == 0);
  const nlohmann::ordered_json exported =
      nlohmann::ordered_json::parse(sfc::test::slurp(dir.file("all.json")));
  const std::string csv = sfc::test::slurp(dir.file("all.csv"));

  // Each JSON edit: a size the predictors refuse (every later query would
  // fail), times a table cannot hold (inf or 0 as a float), a calibration the
  // model would divide by, text JSON cannot encode.
  using Edit = void (*)(nlohmann::ordered_json&);
  const std::vector<std::pair<Edit, std::string>> json_edits = {
      {[](auto& d) { d["platforms"][0]["measurements"][0]["m"] = std::int64_t{1} << 40; },
       "outside 1..2147483647"},
      {[](auto& d) { d["platforms"][0]["measurements"][0]["min_s"] = 1e308; }, "1e+308 s is outside"},
      {[](auto& d) { d["platforms"][0]["measurements"][0]["mean_s"] = 1e-320; }, "s is outside"},
      {[](auto& d) {
         d["platforms"][0]["calibration"] = {
             {"gamma_gflops_per_core", 1e308}, {"beta_gbytes_per_s", 10.0}, {"measured_at", "now"}};
       },
       "calibration values must be"},
      {[](auto& d) { d["platforms"][0]["measurements"][0]["measured_at"] = "a\nb"; }, "control character"},
  };
  for (const auto& [edit, reason] : json_edits) {
    nlohmann::ordered_json document = exported;
    edit(document);
    sfc::test::write_file(dir.file("bad.json"), document.dump());
    check_refused(cli(dir, {"import", dir.file("bad.json"), "--db", dir.file("new.db")}), reason);
    CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
  }

  // CSV: a column named twice (which one is meant?), a later row whose
  // platform cells disagree with the first (they used to be ignored), bytes
  // that are not UTF-8 (a JSON export of them failed later).
  const std::string header = csv.substr(0, csv.find('\n'));
  const std::string first_row =
      csv.substr(header.size() + 1, csv.find('\n', header.size() + 1) - header.size());
  const std::string rest = csv.substr(header.size() + 1 + first_row.size());
  auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  // The compiler is recorded, not hashed: editing it leaves the hash valid.
  const std::string compiler = exported["platforms"][0]["compiler"].get<std::string>();
  const std::vector<std::pair<std::string, std::string>> csv_files = {
      {header + ",m\n" + replaced(first_row, "\n", ",64\n"), "column 'm' appears twice"},
      {header + "\n" + first_row + replaced(rest, compiler, "another compiler"),
       "differs from that platform's first row"},
      {header + "\n" + replaced(first_row, compiler, compiler + "\xff"), "not valid UTF-8"},
  };
  for (const auto& [text, reason] : csv_files) {
    sfc::test::write_file(dir.file("bad.csv"), text);
    check_refused(cli(dir, {"import", dir.file("bad.csv"), "--db", dir.file("new.db")}), reason);
    CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
  }

  // A table: the same bounds as the database's.
  sfc::TuningTable table;
  table.platform = sfc::test::sample_platform();
  table.save(dir.file("t.table"));
  const std::string text = sfc::test::slurp(dir.file("t.table"));
  const std::string calibration =
      text.substr(text.find("calibration "), text.find("\nshapes") - text.find("calibration "));
  for (const char* bad : {"calibration inf inf", "calibration 1e300 1", "calibration -1 0"}) {
    sfc::test::write_file(dir.file("t.table"), replaced(text, calibration, bad));
    CHECK_THROWS_WITH_AS(sfc::TuningTable::load(dir.file("t.table")), doctest::Contains("calibration values"),
                         sfc::Error);
  }
}

TEST_CASE("hardening: an empty platform text field survives every export and import") {
  TempDir dir("hard-empty");
  const std::string db = tuned_database(dir);
  REQUIRE(cli(dir, {"export", "--db", db, "--format", "json", "--all", "-o", dir.file("all.json")}).code ==
          0);
  nlohmann::ordered_json document = nlohmann::ordered_json::parse(sfc::test::slurp(dir.file("all.json")));
  document["platforms"][0]["compiler"] = "";  // recorded only, not in the hash
  sfc::test::write_file(dir.file("empty.json"), document.dump());
  REQUIRE(cli(dir, {"import", dir.file("empty.json"), "--db", dir.file("a.db")}).code == 0);
  for (const std::string format : {"csv", "json"}) {
    const std::string out = dir.file("again." + format);
    REQUIRE(cli(dir, {"export", "--db", dir.file("a.db"), "--format", format, "--all", "-o", out}).code == 0);
    const Run r = cli(dir, {"import", out, "--db", dir.file(format + ".db")});
    CHECK_MESSAGE(r.code == 0, r.err);
  }
  REQUIRE(
      cli(dir, {"export", "--db", dir.file("a.db"), "--format", "table", "-o", dir.file("a.table")}).code ==
      0);
  CHECK(sfc::TuningTable::load(dir.file("a.table")).platform.compiler.empty());
}
