// The machine's resources running out under a tuner: a disk that fills up
// mid-run, a database on a read-only file system. Both on a real tmpfs,
// mounted for the test (root only; elsewhere the tests say so and pass).
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "sfcconf.h"
#include "test_db_sqlite.hpp"
#include "test_db_support.hpp"

using sfc::test::TempDir;

namespace {

// A tmpfs of `size` mounted on a folder of `dir`, unmounted at scope end.
class Tmpfs {
 public:
  Tmpfs(const TempDir& dir, const std::string& size) : path_(dir.file("mnt")) {
    std::filesystem::create_directories(path_);
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (!mounted_) reason_ = std::strerror(errno);
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& reason() const { return reason_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  bool remount(unsigned long flags, const std::string& data) {
    return ::mount(nullptr, path_.c_str(), nullptr, MS_REMOUNT | flags, data.c_str()) == 0;
  }

 private:
  std::string path_, reason_;
  bool mounted_ = false;
};

std::vector<std::string> tune_args(const std::string& db, const std::string& grid,
                                   const std::string& k_layers) {
  return {"tune", "--grid",  grid,     "--k-layers", k_layers, "--k-block-factors",
          "1:8",  "--reps",  "1",      "--warmup",   "0",      "--threads",
          "2",    "--quiet", "--json", "--db",       db};
}

sfc::test::CliRun run(const TempDir& dir, const std::vector<std::string>& args) {
  static int count = 0;
  return sfc::test::run_cli(args, dir.file("run" + std::to_string(count++)));
}

std::size_t rows_of(const std::string& db, const char* query) {
  return std::stoul(sfc::test::raw_value(db, query));
}

}  // namespace

TEST_CASE("resources: a disk that fills up mid-tune: a clear error, the database intact, the rerun resumes") {
  TempDir dir("res-full");
  Tmpfs disk(dir, "160k");
  if (!disk.mounted()) {
    MESSAGE("not run: cannot mount a tmpfs here (" << disk.reason() << ")");
    return;
  }
  const std::string db = disk.file("t.db");
  // 16 shapes of 64 configurations: far more rows than 160 KiB holds.
  const auto args = tune_args(db, "m=64:1024:+64 n=64 k=64", "1:8");
  const auto full = run(dir, args);
  CHECK(full.code == 2);
  CHECK_MESSAGE(full.err.find("database or disk is full") != std::string::npos, full.err);
  CHECK(full.err.find("internal error") == std::string::npos);
  CHECK(sfc::test::integrity(db) == "ok");
  const std::size_t shapes = rows_of(db, "SELECT count(DISTINCT shape_id) FROM measurements");
  CHECK(shapes < 16);                                                      // the disk did fill up
  CHECK(rows_of(db, "SELECT count(*) FROM measurements") == shapes * 64);  // whole shapes only

  REQUIRE(disk.remount(0, "size=16m"));  // room again
  const auto resumed = run(dir, args);
  REQUIRE_MESSAGE(resumed.code == 0, resumed.err);
  const nlohmann::json summary = nlohmann::json::parse(resumed.last_line);
  CHECK(summary["already_done"] == shapes);
  CHECK(summary["tuned"] == 16 - shapes);
  CHECK(rows_of(db, "SELECT count(*) FROM measurements") == 16 * 64);
}

TEST_CASE(
    "resources: a database on a read-only file system is read by every reader, and writers say why not") {
  TempDir dir("res-ro");
  Tmpfs disk(dir, "8m");
  if (!disk.mounted()) {
    MESSAGE("not run: cannot mount a tmpfs here (" << disk.reason() << ")");
    return;
  }
  const std::string db = disk.file("t.db");
  REQUIRE(run(dir, tune_args(db, "m=64,96 n=64 k=64", "1,2")).code == 0);
  REQUIRE(run(dir, tune_args(dir.file("other.db"), "m=128 n=64 k=64", "1,2")).code == 0);
  REQUIRE(disk.remount(MS_RDONLY, ""));

  CHECK(run(dir, {"db", "info", "--db", db}).code == 0);
  const auto query = run(dir, {"query", "64", "64", "64", "--db", db, "--threads", "2"});
  CHECK_MESSAGE(query.code == 0, query.err);
  CHECK(query.out.find("tier exact") != std::string::npos);
  CHECK(run(dir, {"export", "--db", db, "--format", "csv", "--all", "-o", dir.file("all.csv")}).code == 0);
  sfcconf_handle* conf = nullptr;
  CHECK_MESSAGE(sfcconf_open(db.c_str(), "any", &conf) == SFCCONF_OK, sfcconf_last_error());
  sfcconf_close(conf);

  for (const std::vector<std::string>& writer : {tune_args(db, "m=128 n=64 k=64", "1,2"),
                                                 {"import", dir.file("all.csv"), "--db", db},
                                                 {"merge", dir.file("other.db"), "-o", db}}) {
    const auto r = run(dir, writer);
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find("read-only file system") != std::string::npos, writer[0], ": ", r.err);
  }
}
