// Regression tests for the second adversarial pass (issue 63): outputs onto a
// database's own files, special files where a file is read or written, bad
// numbers and environment, and stores a reader may not write. Each input once
// crashed, hung, lost data or was accepted; each is now one clear line and
// exit code 2 (or an sfc::Error), with nothing written.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/tuning_store.hpp"
#include "sfc/tuning_table.hpp"
#include "sfcconf.h"
#include "test_db_sqlite.hpp"
#include "test_db_support.hpp"

using sfc::test::TempDir;

namespace {

using Run = sfc::test::CliRun;

// Runs sfc-tune, killed after `seconds` (a hang is reported as exit code -1).
Run cli(const TempDir& dir, const std::vector<std::string>& args,
        const std::vector<std::string>& environment = {"SFC_COLD_BYTES=1048576"}, int seconds = 60) {
  static int count = 0;
  sfc::test::CliProcess process(args, dir.file("cli" + std::to_string(count++)), environment);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (process.running() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (process.running()) {
    process.signal(SIGKILL);
    process.wait();
    return {-1, process.out(), process.err() + "[killed: no answer in time]", ""};
  }
  const int code = process.wait();
  return {code, process.out(), process.err(), process.last_line()};
}

// One line on stderr, exit code 2, and not an internal error.
void check_refused(const Run& r, const std::string& reason) {
  CHECK_MESSAGE(r.code == 2, r.err);
  CHECK_MESSAGE(r.err.find(reason) != std::string::npos, r.err);
  CHECK(r.err.find("internal error") == std::string::npos);
  // libgomp itself names a value it cannot parse, before main runs: that line is the runtime's.
  std::string ours = r.err;
  if (const std::size_t at = ours.find("libgomp: Invalid value"); at != std::string::npos)
    ours.erase(0, ours.find('\n', at) + 1);
  CHECK_MESSAGE(std::count(ours.begin(), ours.end(), '\n') <= 1, r.err);
}

// A database with 8 measured shapes of 2 configurations each.
std::string tuned_database(const TempDir& dir, const std::string& name = "t.db") {
  const std::string db = dir.file(name);
  const Run r =
      cli(dir, {"tune", "--grid", "m=64,128 n=64 k=64,128", "--k-layers", "1,2", "--k-block-factors", "1",
                "--reps", "1", "--warmup", "0", "--threads", "2", "--quiet", "--db", db});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return db;
}

std::size_t measurements(const std::string& db) {
  const sfc::TuningStore store(db, sfc::TuningStore::Mode::read_only);
  return store.measurements({store.platforms().at(0).hash()}).size();
}

}  // namespace

TEST_CASE("hardening 2: export and bench refuse the database's own -wal, -shm and -claims files as output") {
  TempDir dir("hard2-wal");
  const std::string db = tuned_database(dir);
  for (const std::string suffix : {"-wal", "-shm", "-claims", "-journal"}) {
    CAPTURE(suffix);
    sfc::test::write_file(db + suffix, "");  // present or not, the name is the database's
    check_refused(cli(dir, {"export", "--db", db, "-o", db + suffix}), "of the database");
    check_refused(cli(dir, {"export", "--db", db, "--format", "table", "-o", db + suffix}),
                  "of the database");
    check_refused(cli(dir, {"bench", "--grid", "64", "--db", db, "--csv", db + suffix}), "of the database");
    if (suffix != "-shm") CHECK(sfc::test::slurp(db + suffix).empty());  // SQLite itself writes its -shm
    std::filesystem::remove(db + suffix);
  }
  // Another name of the same file (a hard link) is the same file.
  REQUIRE(::link(db.c_str(), dir.file("alias.db").c_str()) == 0);
  check_refused(cli(dir, {"export", "--db", db, "-o", dir.file("alias.db")}), "is the database");
  // merge: the output is one of an input's files.
  check_refused(cli(dir, {"merge", db, "-o", db + "-wal"}), "of the database");
  // The companion files of a database the command does not name are refused alike.
  const std::string other = tuned_database(dir, "other.db");
  check_refused(cli(dir, {"merge", db, "-o", other + "-journal"}), "of the database " + other);
  check_refused(cli(dir, {"export", "--db", db, "-o", other + "-wal"}), "of the database " + other);
  CHECK(measurements(other) == 8);
  CHECK(measurements(db) == 8);
}

TEST_CASE("hardening 2: an output that is a pipe nobody reads is refused, not waited on") {
  TempDir dir("hard2-fifo-out");
  const std::string db = tuned_database(dir);
  const std::string fifo = dir.file("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  check_refused(cli(dir, {"export", "--db", db, "-o", fifo}), "a pipe that no process reads");
  check_refused(cli(dir, {"export", "--db", db, "--format", "table", "-o", fifo}),
                "a pipe that no process reads");
  check_refused(cli(dir, {"bench", "--grid", "64", "--csv", fifo}), "a pipe that no process reads");
}

TEST_CASE("hardening 2: tune, bench and evaluate refuse a shape file that is a pipe or a device") {
  TempDir dir("hard2-shapes");
  const std::string fifo = dir.file("shapes.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    CAPTURE(path);
    check_refused(cli(dir, {"tune", "--shapes", path, "--db", dir.file("t.db")}), "not a regular file");
    check_refused(cli(dir, {"bench", "--shapes", path}), "not a regular file");
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("t.db")));
  check_refused(cli(dir, {"tune", "--random", "100000000", "--db", dir.file("t.db")}), "--random");
}

TEST_CASE("hardening 2: OMP_NUM_THREADS is checked as --threads is, whatever --threads says") {
  TempDir dir("hard2-omp");
  for (const std::string value : {"100000", "4097", "0", "-3", "two"}) {
    CAPTURE(value);
    const std::vector<std::string> environment = {"SFC_COLD_BYTES=1048576", "OMP_NUM_THREADS=" + value};
    // Each of these crashed (a team of 100,000 threads) or hung (4097) before.
    check_refused(cli(dir, {"gemm", "64", "64", "64", "--threads", "2"}, environment), "OMP_NUM_THREADS");
    check_refused(cli(dir, {"tune", "--grid", "64", "--threads", "2", "--db", dir.file("t.db")}, environment),
                  "OMP_NUM_THREADS");
    check_refused(cli(dir, {"bench", "--grid", "64", "--threads", "2", "--vs", "none"}, environment),
                  "OMP_NUM_THREADS");
  }
  const Run fine = cli(dir, {"gemm", "64", "64", "64", "--reps", "1", "--warmup", "0"},
                       {"SFC_COLD_BYTES=1048576", "OMP_NUM_THREADS=2,1"});
  CHECK_MESSAGE(fine.code == 0, fine.err);
}

TEST_CASE("hardening 2: bad numbers are refused where they enter, not wrapped, saturated or taken as NaN") {
  TempDir dir("hard2-numbers");
  const std::string db = dir.file("t.db");
  check_refused(cli(dir, {"gemm", "64", "64", "64", "--blocks", "4294967360x64x64"}), "--blocks");
  check_refused(cli(dir, {"gemm", "64", "64", "64", "--blocks", "64x64x64x"}), "--blocks");
  check_refused(cli(dir, {"tune", "--random", "2", "--seed", "99999999999999999999999", "--db", db}),
                "--seed");
  check_refused(cli(dir, {"tune", "--random", "2", "--seed", "-1", "--db", db}), "--seed");
  for (const std::string bad : {"nan", "inf", "-nan"}) {
    check_refused(cli(dir, {"tune", "--grid", "64", "--confirm-margin", bad, "--db", db}),
                  "--confirm-margin");
    check_refused(cli(dir, {"tune", "--grid", "64", "--budget", bad, "--db", db}), "--budget");
    check_refused(cli(dir, {"bench", "--grid", "64", "--alpha", bad}), "--alpha");
  }
  CHECK_FALSE(std::filesystem::exists(db));
  // A junk cold-input size is named (and the default used), as every other variable's is.
  const Run r = cli(dir, {"gemm", "64", "64", "64", "--reps", "1", "--warmup", "0", "--threads", "1"},
                    {"SFC_COLD_BYTES=lots"});
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK_MESSAGE(r.err.find("sfc-tune: warning: SFC_COLD_BYTES=lots is not a byte count") != std::string::npos,
                r.err);
  const Run amx = cli(dir, {"gemm", "64", "64", "64", "--dtype", "bf16", "--reps", "1", "--warmup", "0"},
                      {"SFC_COLD_BYTES=1048576", "SFC_AMX=2"});
  // (It is read where a bf16 plan is made, even on a CPU that then has no bf16 kernel.)
  const bool no_bf16 = amx.err.find("bf16 GEMM is not supported on this CPU") != std::string::npos;
  CHECK_MESSAGE((amx.code == 0) != no_bf16, amx.err);
  CHECK_MESSAGE(
      amx.err.find("sfc-tune: warning: SFC_AMX=2 is not 0 (off) or 1 (on); using 1\n") != std::string::npos,
      amx.err);
}

TEST_CASE("hardening 2: threads of one process creating one database at once all open it") {
  TempDir dir("hard2-threads");
  for (int round = 0; round < 4; ++round) {
    const std::string db = dir.file("online" + std::to_string(round) + ".db");
    std::vector<std::string> errors(8);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < errors.size(); ++t)
      threads.emplace_back([&, t] {
        try {
          sfc::TuningStore store(db, sfc::TuningStore::Mode::create);
          store.upsert_platform(sfc::test::sample_platform());
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    for (std::thread& t : threads) t.join();
    for (const std::string& e : errors) CHECK_MESSAGE(e.empty(), e);
    CHECK(sfc::TuningStore(db, sfc::TuningStore::Mode::read_only).platforms().size() == 1);
    CHECK(sfc::test::integrity(db) == "ok");
  }
}

TEST_CASE("hardening 2: a failed merge into an existing database leaves it unchanged") {
  TempDir dir("hard2-merge");
  const std::string good = tuned_database(dir, "good.db");
  const std::string bad = dir.file("bad.db");
  std::filesystem::copy_file(good, bad);
  sfc::test::raw_sql(
      bad, "PRAGMA ignore_check_constraints = 1; UPDATE measurements SET k_layers = 99 WHERE id = 1;");
  const std::string out = dir.file("out.db");
  sfc::TuningStore(out, sfc::TuningStore::Mode::create).upsert_platform(sfc::test::sample_platform());
  // Opened read-write to clean up on close, the input fails SQLite's quick_check at open.
  check_refused(cli(dir, {"merge", good, bad, "-o", out}), "CHECK constraint failed");
  const sfc::TuningStore store(out, sfc::TuningStore::Mode::read_only);
  for (const sfc::Platform& p : store.platforms()) CHECK(store.measurements({p.hash()}).empty());

  // A platform whose fields no longer match its hash (its cores edited to 0) is refused, not re-keyed.
  const std::string edited = dir.file("edited.db");
  std::filesystem::copy_file(good, edited);
  sfc::test::raw_sql(edited, "PRAGMA ignore_check_constraints = 1; UPDATE platforms SET cores = 0;");
  check_refused(cli(dir, {"merge", edited, "-o", dir.file("new.db")}), "does not match its fields");
}

TEST_CASE("hardening 2: JSON imports refuse duplicated keys, non-objects and overlong text in one line") {
  TempDir dir("hard2-json");
  const std::string db = tuned_database(dir);
  REQUIRE(cli(dir, {"export", "--db", db, "--format", "json", "--all", "-o", dir.file("all.json")}).code ==
          0);
  const std::string text = sfc::test::slurp(dir.file("all.json"));
  auto import_of = [&](const std::string& content) {
    sfc::test::write_file(dir.file("bad.json"), content);
    return cli(dir, {"import", dir.file("bad.json"), "--db", dir.file("new.db")});
  };
  std::string twice = text;
  twice.insert(twice.find("\"min_s\""), "\"min_s\": 0.5, ");  // the last used to win
  check_refused(import_of(twice), "\"min_s\" appears twice");
  check_refused(import_of("[1, 2]"), "a JSON array");
  check_refused(import_of("\"sfc-tune-export\""), "a JSON string");
  const Run truncated = import_of(text.substr(0, text.size() / 2));
  check_refused(truncated, "not valid JSON");
  CHECK(truncated.err.find("[json.exception") == std::string::npos);
  std::string huge = text;
  const std::string compiler = "\"compiler\": \"";
  huge.insert(huge.find(compiler) + compiler.size(), std::string(5 << 20, 'x'));
  check_refused(import_of(huge), "bytes long");
  CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
  check_refused(cli(dir, {"export", "--db", db, "--format", "table", "--all", "-o", dir.file("x.table")}),
                "--all");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.table")));
}

TEST_CASE(
    "hardening 2: a database in a folder its reader may not write is read, and writers say not writable") {
  TempDir dir("hard2-rodir");
  std::filesystem::create_directories(dir.path() / "shared");
  const std::string db = tuned_database(dir, "shared/t.db");
  REQUIRE_FALSE(std::filesystem::exists(db + "-wal"));  // a finished tuner leaves the file alone
  const std::string shared = (dir.path() / "shared").string();
  REQUIRE(::chmod(shared.c_str(), 0555) == 0);
  REQUIRE(::chmod(db.c_str(), 0644) == 0);
  // As root (who may write anywhere) the reader is another user; otherwise the folder's mode suffices.
  const bool as_root = ::geteuid() == 0;
  if (as_root && !std::filesystem::exists("/usr/bin/setpriv")) {
    MESSAGE("not run: needs setpriv to read as another user");
    ::chmod(shared.c_str(), 0755);
    return;
  }
  static int count = 0;
  auto as_reader = [&](std::vector<std::string> args) {
    std::vector<std::string> argv;
    std::string binary = SFC_TUNE_BINARY;
    if (as_root) {
      argv = {"--reuid=65534", "--regid=65534", "--clear-groups", SFC_TUNE_BINARY};
      binary = "/usr/bin/setpriv";
    }
    argv.insert(argv.end(), args.begin(), args.end());
    sfc::test::CliProcess process(argv, dir.file("reader" + std::to_string(count++)),
                                  {"SFC_COLD_BYTES=1048576"}, binary);
    const int code = process.wait();
    return Run{code, process.out(), process.err(), process.last_line()};
  };
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"db", "info", "--db", db},
        {"query", "64", "64", "64", "--db", db, "--threads", "2"},
        {"export", "--db", db, "-o", "-"},
        {"export", "--db", db, "--format", "table", "-o", "/dev/null"}}) {
    const Run r = as_reader(args);
    CAPTURE(args[0]);
    CHECK_MESSAGE(r.code == 0, r.err);
  }
  const Run tune = as_reader({"tune", "--grid", "64", "--threads", "2", "--db", db});
  check_refused(tune, "not writable");
  REQUIRE(cli(dir, {"export", "--db", db, "--format", "json", "--all", "-o", dir.file("all.json")}).code ==
          0);
  check_refused(as_reader({"import", dir.file("all.json"), "--db", db}), "not writable");
  ::chmod(shared.c_str(), 0755);
  CHECK(measurements(db) == 8);
}

TEST_CASE("hardening 2: an unusable HWLOC_XMLFILE or SFC_PLATFORM is a tuning error, and never waited on") {
  TempDir dir("hard2-hwloc");
  const std::string fifo = dir.file("topology.xml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), dir.path().string()}) {
    CAPTURE(path);
    const std::vector<std::string> environment = {"SFC_COLD_BYTES=1048576", "HWLOC_XMLFILE=" + path};
    check_refused(cli(dir, {"query", "64", "64", "64", "--threads", "2"}, environment), "HWLOC_XMLFILE");
    check_refused(cli(dir, {"db", "info", "--db", dir.file("absent.db")}, {"HWLOC_XMLFILE=" + path}),
                  "no tuning database");
  }

  sfc::TuningTable table;
  table.platform = sfc::test::sample_platform();
  table.save(dir.file("t.table"));
  sfcconf_handle* conf = nullptr;
  ::setenv("SFC_PLATFORM", "bogus", 1);
  CHECK(sfcconf_open(dir.file("t.table").c_str(), nullptr, &conf) == SFCCONF_ERR_PLATFORM);
  CHECK(std::string(sfcconf_last_error()).find("SFC_PLATFORM") != std::string::npos);
  // The caller's own argument is still the caller's mistake.
  CHECK(sfcconf_open(dir.file("t.table").c_str(), "bogus", &conf) == SFCCONF_ERR_ARGUMENT);
  ::unsetenv("SFC_PLATFORM");
  ::setenv("HWLOC_XMLFILE", dir.path().c_str(), 1);
  CHECK(sfcconf_open(dir.file("t.table").c_str(), nullptr, &conf) == SFCCONF_ERR_UNREADABLE);
  CHECK(std::string(sfcconf_last_error()).find("HWLOC_XMLFILE") != std::string::npos);
  ::unsetenv("HWLOC_XMLFILE");
  CHECK(conf == nullptr);
}

TEST_CASE("hardening 2: tune refuses a database its readers refuse as inconsistent") {
  TempDir dir("hard2-tune-inconsistent");
  const std::string db = tuned_database(dir);
  // The stored winners carry no CHECK: readers refused them, tune counted every shape as done.
  sfc::test::raw_sql(db, "UPDATE winning_configs SET k_layers = 99");
  check_refused(cli(dir, {"query", "64", "64", "64", "--db", db, "--threads", "2"}), "inconsistent");
  check_refused(
      cli(dir, {"tune", "--grid", "m=64,128 n=64 k=64,128", "--k-layers", "1,2", "--k-block-factors", "1",
                "--reps", "1", "--warmup", "0", "--threads", "2", "--quiet", "--db", db}),
      "inconsistent");
}
