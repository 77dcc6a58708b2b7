// (No ';' in a test name here: ctest's discovery splits a name at ';' and then
// runs no test at all under the shortened name.)
// Shape recording: the record file's format, counts from several processes
// merged into one file, SFC_VERBOSE's lines, and the commands that read a
// record (record show, tune --from-record).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "sfc/online_tuner.hpp"
#include "sfc/shape_record.hpp"
#include "sfc/tuning_store.hpp"
#include "sfcconf.h"
#include "test_db_support.hpp"

using sfc::RecordedShape;
using sfc::RecordKey;
using sfc::RecordTranspose;
using sfc::ShapeRecord;
using sfc::test::CliProcess;
using sfc::test::TempDir;

namespace {

RecordKey key(std::int64_t m, std::int64_t n, std::int64_t k, sfc::Layout layout = sfc::Layout::row_major,
              RecordTranspose ta = RecordTranspose::unknown, RecordTranspose tb = RecordTranspose::unknown) {
  return {m, n, k, sfc::DType::f32, 2, layout, ta, tb};
}

// The calls of each key of `path`, by key.
std::map<RecordKey, std::uint64_t> calls_of(const std::string& path) {
  std::map<RecordKey, std::uint64_t> calls;
  const ShapeRecord record = ShapeRecord::load(path);
  for (const RecordedShape& s : record.shapes()) calls[s.key] += s.calls;
  return calls;
}

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::size_t count = 0;
  for (std::string line; std::getline(in, line);) count += line.starts_with(prefix);
  return count;
}

}  // namespace

TEST_CASE("shape record: the text round-trips and adding merges calls, keeping the newer answer") {
  ShapeRecord record;
  record.add({key(512, 2048, 2048), 3, sfc::Tier::nearest, 0.5});
  record.add({key(64, 64, 64, sfc::Layout::col_major, RecordTranspose::none, RecordTranspose::transpose), 7,
              sfc::Tier::default_config, std::numeric_limits<double>::infinity()});
  record.add({key(512, 2048, 2048), 4, sfc::Tier::exact, 0});
  REQUIRE(record.shapes().size() == 2);
  CHECK(record.total_calls() == 14);

  const std::string text = record.format();
  CHECK(text.starts_with("sfc-shape-record 1\n"));
  CHECK(text.find("512 2048 2048 f32 2 row ? ? 7 exact 0\n") != std::string::npos);
  CHECK(text.find("64 64 64 f32 2 col N T 7 default inf\n") != std::string::npos);

  const ShapeRecord again = ShapeRecord::parse(text, "again");
  REQUIRE(again.shapes().size() == 2);
  CHECK(again.format() == text);
  // A key written twice by hand counts both lines.
  const ShapeRecord doubled = ShapeRecord::parse(text + "512 2048 2048 f32 2 row ? ? 1 exact 0\n", "doubled");
  CHECK(doubled.total_calls() == 15);
}

TEST_CASE("shape record: a malformed file is refused with its line and the reason") {
  const std::string header = "sfc-shape-record 1\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty: not a shape record"},
      {"m n k\n1 2 3\n", "bad:1: not a shape record"},
      {"sfc-shape-record 2\n", "bad:1: shape record version 2 is newer"},
      {header + "1 2 3 f32 2 row N N 5 exact\n", "bad:2: expected 11 fields"},
      {header + "# a comment\n\n0 2 3 f32 2 row N N 5 exact 0\n", "bad:4: m '0' is not an integer in 1.."},
      {header + "1 2 3 f33 2 row N N 5 exact 0\n", "bad:2: dtype:"},
      {header + "1 2 3 f32 x row N N 5 exact 0\n", "bad:2: threads 'x'"},
      {header + "1 2 3 f32 2 diagonal N N 5 exact 0\n", "bad:2: layout:"},
      {header + "1 2 3 f32 2 row X N 5 exact 0\n", "bad:2: trans_a 'X' is not N, T or ?"},
      {header + "1 2 3 f32 2 row N N -5 exact 0\n", "bad:2: calls '-5'"},
      {header + "1 2 3 f32 2 row N N 5 best 0\n", "bad:2: tier 'best'"},
      {header + "1 2 3 f32 2 row N N 5 exact -1\n", "bad:2: distance '-1'"},
      {std::string("\x7f"
                   "ELF\x02\x01\x01",
                   7),
       "bad:1: not a shape record"},
  };
  for (const auto& bad : cases) {  // no structured binding: clang 14's lambdas (CAPTURE) cannot capture one
    const std::string& text = bad.first;
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(ShapeRecord::parse(text, "bad"), doctest::Contains(bad.second.c_str()),
                         sfc::RecordFormatError);
  }
}

TEST_CASE("shape record: two processes recording into one file add up exactly") {
  TempDir dir("record-two");
  const std::string record = dir.file("shapes.record");
  const std::vector<std::string> args = {"conf", "3000", "512", "2048", "2048", "100", "200", "300"};
  const std::vector<std::string> env = {"SFC_RECORD=" + record};
  {
    // Both run at once, each writing into the file every 500 queries.
    CliProcess first(args, dir.file("first"), env, SFC_RECORD_DRIVER);
    CliProcess second(args, dir.file("second"), env, SFC_RECORD_DRIVER);
    CHECK(first.wait() == 0);
    CHECK(second.wait() == 0);
    CHECK(first.err() == "");
    CHECK(second.err() == "");
  }
  const auto calls = calls_of(record);
  CHECK(calls.size() == 2);
  CHECK(calls.at(key(512, 2048, 2048)) == 6000);
  CHECK(calls.at(key(100, 200, 300)) == 6000);
  // Only the record and its lock file: no temporary file was left behind.
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 2 + 4);  // + 2 x (.out, .err)

  // A third run adds to what is there.
  CliProcess third({"conf", "10", "100", "200", "300"}, dir.file("third"), env, SFC_RECORD_DRIVER);
  CHECK(third.wait() == 0);
  CHECK(calls_of(record).at(key(100, 200, 300)) == 6010);
}

TEST_CASE(
    "shape record: sfc::gemm calls are recorded with their transposes, and a bad file is reported, not "
    "fatal") {
  TempDir dir("record-gemm");
  const std::string record = dir.file("gemm.record");
  CliProcess run({"gemm", "3", "40", "50", "60", "70", "30", "20"}, dir.file("gemm"),
                 {"SFC_RECORD=" + record, "OMP_NUM_THREADS=2"}, SFC_RECORD_DRIVER);
  CHECK(run.wait() == 0);
  const auto calls = calls_of(record);
  CHECK(calls.size() == 2);
  CHECK(calls.at(
            key(40, 50, 60, sfc::Layout::row_major, RecordTranspose::none, RecordTranspose::transpose)) == 3);
  CHECK(calls.at(
            key(70, 30, 20, sfc::Layout::row_major, RecordTranspose::none, RecordTranspose::transpose)) == 3);

  // Someone else's file under the record's name: said on stderr, left alone, the GEMMs still run.
  const std::string not_a_record = dir.file("notes.txt");
  sfc::test::write_file(not_a_record, "my notes\n");
  CliProcess refused({"gemm", "1", "40", "50", "60"}, dir.file("refused"),
                     {"SFC_RECORD=" + not_a_record, "OMP_NUM_THREADS=2"}, SFC_RECORD_DRIVER);
  CHECK(refused.wait() == 0);
  CHECK(refused.err().find("sfc-record: SFC_RECORD=" + not_a_record) != std::string::npos);
  CHECK(refused.err().find("not a shape record") != std::string::npos);
  CHECK(sfc::test::slurp(not_a_record) == "my notes\n");
}

TEST_CASE("SFC_VERBOSE: one line per sfc::gemm call, with the shape, the tier and the time") {
  TempDir dir("verbose");
  CliProcess run({"gemm", "4", "40", "50", "60", "70", "30", "20"}, dir.file("verbose"),
                 {"SFC_VERBOSE=1", "OMP_NUM_THREADS=2"}, SFC_RECORD_DRIVER);
  CHECK(run.wait() == 0);
  const std::string err = run.err();
  CHECK(count_lines_starting(err, "sfc_verbose,gemm,") == 8);
  CHECK(count_lines_starting(
            err, "sfc_verbose,gemm,dtype=f32,layout=row,trans=NT,shape=40x50x60,threads=2,tier=") == 4);
  CHECK(err.find(",plan=new,") != std::string::npos);
  CHECK(err.find(",plan=reused,") != std::string::npos);
  CHECK(err.find(",time_us=") != std::string::npos);

  CliProcess quiet({"gemm", "2", "40", "50", "60"}, dir.file("quiet"), {"SFC_VERBOSE=0"}, SFC_RECORD_DRIVER);
  CHECK(quiet.wait() == 0);
  CHECK(quiet.err() == "");
}

TEST_CASE("sfcconf_record_open: bad paths and files are refused with a status and queries are counted") {
  TempDir dir("record-c-api");
  CHECK(sfcconf_record_open(nullptr) == SFCCONF_ERR_ARGUMENT);
  CHECK(sfcconf_record_open(dir.file("no/such/dir/x.record").c_str()) == SFCCONF_ERR_UNREADABLE);
  CHECK(std::string(sfcconf_last_error()).find("no/such/dir/x.record.lock") != std::string::npos);
  const std::string notes = dir.file("notes.txt");
  sfc::test::write_file(notes, "1 2 3\n");
  CHECK(sfcconf_record_open(notes.c_str()) == SFCCONF_ERR_CORRUPT);
  CHECK(std::string(sfcconf_last_error()).find(notes + ":1: not a shape record") != std::string::npos);
  CHECK(sfcconf_record_flush() == SFCCONF_OK);  // nothing active: nothing to write

  const std::string record = dir.file("api.record");
  REQUIRE(sfcconf_record_open(record.c_str()) == SFCCONF_OK);
  sfcconf_handle* conf = nullptr;
  REQUIRE(sfcconf_open(nullptr, nullptr, &conf) == SFCCONF_OK);
  sfcconf_answer a;
  for (int i = 0; i < 5; ++i) CHECK(sfcconf_query(conf, 300, 200, 100, SFCCONF_F64, 2, &a) == SFCCONF_OK);
  CHECK(sfcconf_query(conf, 0, 200, 100, SFCCONF_F64, 2, &a) ==
        SFCCONF_ERR_ARGUMENT);  // refused: not counted
  CHECK(sfcconf_record_flush() == SFCCONF_OK);
  CHECK(sfcconf_query(conf, 300, 200, 100, SFCCONF_F64, 2, &a) == SFCCONF_OK);
  CHECK(sfcconf_record_close() == SFCCONF_OK);
  CHECK(sfcconf_query(conf, 300, 200, 100, SFCCONF_F64, 2, &a) == SFCCONF_OK);  // after close: not counted
  sfcconf_close(conf);
  const ShapeRecord written = ShapeRecord::load(record);
  REQUIRE(written.shapes().size() == 1);
  CHECK(written.shapes()[0].key == RecordKey{300, 200, 100, sfc::DType::f64, 2, sfc::Layout::blocked,
                                             RecordTranspose::unknown, RecordTranspose::unknown});
  CHECK(written.shapes()[0].calls == 6);
  CHECK(written.shapes()[0].tier == sfc::Tier::default_config);
}

namespace {

// Three shapes whose estimated times order them against their call counts:
// 512^3 x 10 calls outweighs 64^3 x 1000 (the model's time grows with M N K).
const std::string kRecordText =
    "sfc-shape-record 1\n"
    "# written by hand for the test\n"
    "64 64 64 f32 2 row N N 1000 default inf\n"
    "512 512 512 f32 2 row N T 10 nearest 0.5\n"
    "128 64 64 f32 2 row N N 3 exact 0\n"
    "128 64 64 f32 2 row N T 2 exact 0\n"
    "96 64 64 f32 2 blocked ? ? 0 default inf\n";

}  // namespace

TEST_CASE("record show: shapes ranked by calls x the model's time with their tier, and bad files exit 2") {
  TempDir dir("record-show");
  const std::string record = dir.file("app.record");
  sfc::test::write_file(record, kRecordText);
  const auto shown = sfc::test::run_cli({"record", "show", record, "--json"}, dir.file("show"));
  REQUIRE(shown.code == 0);
  const nlohmann::json document = nlohmann::json::parse(shown.last_line);
  CHECK(document["calls"] == 1015);
  CHECK(document["shapes"] == 5);
  CHECK(document["calibrated"] == false);
  const auto& ranking = document["ranking"];
  REQUIRE(ranking.size() == 5);
  CHECK(ranking[0]["m"] == 512);
  CHECK(ranking[0]["tier"] == "nearest");
  CHECK(ranking[0]["trans_b"] == "T");
  CHECK(ranking[1]["m"] == 64);
  CHECK(ranking[1]["distance"].is_null());
  double share = 0;
  for (std::size_t i = 0; i < ranking.size(); ++i) {
    share += ranking[i]["share"].get<double>();
    if (i > 0) CHECK(ranking[i - 1]["share"].get<double>() >= ranking[i]["share"].get<double>());
  }
  CHECK(share == doctest::Approx(1.0));
  CHECK(ranking[4]["calls"] == 0);
  CHECK(shown.err.find("512x512x512") != std::string::npos);  // the readable table

  const auto top = sfc::test::run_cli({"record", "show", record, "--top", "2", "--json"}, dir.file("top"));
  CHECK(nlohmann::json::parse(top.last_line)["ranking"].size() == 2);

  const std::string bad = dir.file("bad.record");
  sfc::test::write_file(bad, "sfc-shape-record 1\n64 64 64 f32 2 row N N lots default inf\n");
  const auto refused = sfc::test::run_cli({"record", "show", bad}, dir.file("bad"));
  CHECK(refused.code == 2);
  CHECK(refused.err.find(bad + ":2: calls 'lots' is not an integer") != std::string::npos);
  const auto missing = sfc::test::run_cli({"record", "show", dir.file("none.record")}, dir.file("missing"));
  CHECK(missing.code == 2);
  CHECK(missing.err.find("cannot read") != std::string::npos);
}

TEST_CASE("tune --from-record: only the recorded shapes, largest share first, and a rerun tunes nothing") {
  TempDir dir("record-tune");
  const std::string record = dir.file("app.record"), db = dir.file("t.db");
  sfc::test::write_file(record, kRecordText);
  const std::vector<std::string> tune = {"tune", "--from-record",     record, "--db",   db,  "--k-layers",
                                         "1",    "--k-block-factors", "1:2",  "--reps", "1", "--warmup",
                                         "0"};
  const auto first = sfc::test::run_cli(tune, dir.file("first"));
  REQUIRE(first.code == 0);
  // The progress lines name each shape as it is tuned: in the order of the shares.
  const std::size_t big = first.err.find("] 512x512x512:"), small = first.err.find("] 64x64x64:"),
                    mid = first.err.find("] 128x64x64:");
  REQUIRE(big != std::string::npos);
  REQUIRE(small != std::string::npos);
  REQUIRE(mid != std::string::npos);
  CHECK(big < small);
  CHECK(small < mid);
  CHECK(first.err.find("96x64x64") == std::string::npos);  // recorded, never called: nothing to gain

  // The store holds exactly the recorded shapes (transposes merged), row-major, two configurations each.
  const sfc::TuningStore store(db, sfc::TuningStore::Mode::read_only);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> tuned;
  for (const sfc::Platform& p : store.platforms())
    for (const sfc::Measurement& m : store.measurements({p.hash()})) {
      CHECK(m.layout == sfc::Layout::row_major);
      tuned.insert({m.shape.m, m.shape.n, m.shape.k});
    }
  CHECK(tuned == std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
                     {512, 512, 512}, {64, 64, 64}, {128, 64, 64}});

  std::vector<std::string> again = tune;
  again.insert(again.end(), {"--json", "--quiet"});
  const auto rerun = sfc::test::run_cli(again, dir.file("rerun"));
  REQUIRE(rerun.code == 0);
  const nlohmann::json summary = nlohmann::json::parse(rerun.last_line);
  CHECK(summary["tuned"] == 0);
  CHECK(summary["already_done"] == 3);
  CHECK(summary["measurements"] == 0);
  CHECK(summary["targets"][0]["shape"] == "512x512x512");

  // --top and --min-share cut the list; --dtype filters it.
  std::vector<std::string> cut = again;
  cut.insert(cut.end(), {"--top", "1"});
  CHECK(nlohmann::json::parse(sfc::test::run_cli(cut, dir.file("top")).last_line)["shapes"] == 1);
  std::vector<std::string> f64 = again;
  f64.insert(f64.end(), {"--dtype", "f64"});
  CHECK(nlohmann::json::parse(sfc::test::run_cli(f64, dir.file("f64")).last_line)["shapes"] == 0);
  const auto both =
      sfc::test::run_cli({"tune", "--from-record", record, "--grid", "64", "--db", db}, dir.file("both"));
  CHECK(both.code == 2);
  CHECK(both.err.find("give exactly one of") != std::string::npos);
}

namespace {

// The measurements a database holds for one shape (row-major f32), and its winner.
struct Stored {
  std::vector<sfc::Measurement> measurements;
  std::optional<sfc::Winner> winner;
};
Stored stored(const std::string& db, sfc::GemmShape shape, int threads) {
  const sfc::TuningStore store(db, sfc::TuningStore::Mode::read_only);
  Stored s;
  for (const sfc::Platform& p : store.platforms()) {
    const sfc::ResultFilter filter(p.hash(), sfc::DType::f32, threads, sfc::Layout::row_major, shape);
    for (const sfc::Measurement& m : store.measurements(filter)) s.measurements.push_back(m);
    if (!s.winner) s.winner = store.winner(filter);
  }
  return s;
}

}  // namespace

TEST_CASE(
    "online tuning: every call is right while the candidates run, and the winner is stored and used next "
    "time") {
  TempDir dir("online");
  const std::string db = dir.file("online.db");
  // Deep K: the model's choice (K_layers 2) differs from the default's, so there is more than one candidate.
  const std::vector<std::string> env = {"SFC_TUNE=online", "SFC_TUNE_DB=" + db, "SFC_TUNE_BUDGET_MS=60000",
                                        "OMP_NUM_THREADS=2", "SFC_VERBOSE=1"};
  CliProcess tuning({"gemm", "40", "64", "64", "4096"}, dir.file("tuning"), env, SFC_RECORD_DRIVER);
  CHECK(tuning.wait() == 0);  // the driver checks every C against an fp64 reference
  const std::string err = tuning.err();
  std::size_t measured = 0, won = 0;
  {
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) {
      measured += line.find("plan=online-candidate") != std::string::npos;
      won += line.find("plan=online-winner") != std::string::npos;
    }
  }
  const Stored s = stored(db, {64, 64, 4096}, 2);
  REQUIRE(s.winner);
  CHECK(s.measurements.size() >= 2);
  // Every candidate ran kRounds timed calls, each after a settling one (the
  // budget is far), then the winner took over.
  CHECK(measured == s.measurements.size() * sfc::OnlineTuner::kRounds * sfc::OnlineTuner::kCallsPerRound);
  for (const sfc::Measurement& m : s.measurements) CHECK(m.reps == sfc::OnlineTuner::kRounds);
  CHECK(won == 1);
  CHECK(measured + 1 <= 40);

  // A new process answers the shape from the database: exact, the stored winner, nothing measured.
  CliProcess next({"gemm", "2", "64", "64", "4096"}, dir.file("next"), env, SFC_RECORD_DRIVER);
  CHECK(next.wait() == 0);
  const std::string expected = "tier=exact,distance=0.000,k_layers=" + std::to_string(s.winner->k_layers) +
                               ",k_block_factor=" + std::to_string(s.winner->k_block_factor) + ",";
  CHECK(count_lines_starting(next.err(), "sfc_verbose,gemm,") == 2);
  CHECK(next.err().find(expected) != std::string::npos);
  CHECK(next.err().find("plan=online") == std::string::npos);  // the info lines name the database
  CHECK(stored(db, {64, 64, 4096}, 2).measurements.size() == s.measurements.size());
}

TEST_CASE("online tuning: two threads calling one untuned shape tune it once") {
  TempDir dir("online-threads");
  const std::string db = dir.file("online.db");
  // Each thread's call measures only while the other is not measuring, so the
  // two may get as few as half their calls measured: each makes twice what
  // tuning the shape takes (6 candidates x 3 rounds x 2 calls: 40 calls
  // left it untuned now and then, with no database written).
  using sfc::OnlineTuner;
  const int calls = 2 * int(OnlineTuner::kShortlist) * OnlineTuner::kRounds * OnlineTuner::kCallsPerRound + 8;
  CliProcess run({"gemm2", std::to_string(calls), "64", "64", "4096"}, dir.file("threads"),
                 {"SFC_TUNE=online", "SFC_TUNE_DB=" + db, "SFC_TUNE_BUDGET_MS=60000"}, SFC_RECORD_DRIVER);
  CHECK(run.wait() == 0);
  CHECK(run.err() == "");
  const Stored s = stored(db, {64, 64, 4096}, 1);
  REQUIRE(s.winner);
  // One row per candidate, each measured exactly kRounds times: nobody measured it again.
  std::set<std::pair<int, int>> configurations;
  for (const sfc::Measurement& m : s.measurements) {
    CHECK(m.reps == sfc::OnlineTuner::kRounds);
    configurations.insert({m.k_layers, m.k_block_factor});
  }
  CHECK(configurations.size() == s.measurements.size());
}

TEST_CASE(
    "online tuning: threads tuning their own shapes into a database that does not exist yet all store") {
  // Each thread stores its winner at about the same time, the first ones creating the database: they
  // collided on its temporary name ("attempt to write a readonly database", no database at all).
  for (int round = 0; round < 3; ++round) {
    TempDir dir("online-spread");
    const std::string db = dir.file("online.db");
    CliProcess run(
        {"spread", "40", "64", "64", "64", "64", "64", "128", "64", "128", "64", "128", "64", "64"},
        dir.file("spread"), {"SFC_TUNE=online", "SFC_TUNE_DB=" + db, "SFC_TUNE_BUDGET_MS=60000"},
        SFC_RECORD_DRIVER);
    CHECK(run.wait() == 0);
    CHECK(run.err() == "");
    REQUIRE(std::filesystem::exists(db));
    for (const sfc::GemmShape shape :
         {sfc::GemmShape{64, 64, 64}, {64, 64, 128}, {64, 128, 64}, {128, 64, 64}})
      CHECK(stored(db, shape, 1).winner);
  }
}

TEST_CASE("online tuning: a bad setting is said once on stderr and its default used") {
  TempDir dir("online-bad");
  CliProcess bad({"gemm", "2", "40", "50", "60"}, dir.file("bad"), {"SFC_TUNE=offline", "OMP_NUM_THREADS=2"},
                 SFC_RECORD_DRIVER);
  CHECK(bad.wait() == 0);
  CHECK(bad.err() == "sfc-tune: warning: SFC_TUNE=offline is not online; using off (no online tuning)\n");
  CliProcess budget({"gemm", "2", "40", "50", "60"}, dir.file("budget"),
                    {"SFC_TUNE=online", "SFC_TUNE_BUDGET_MS=soon", "SFC_TUNE_DB=" + dir.file("x.db")},
                    SFC_RECORD_DRIVER);
  CHECK(budget.wait() == 0);
  CHECK(budget.err() == "sfc-tune: warning: SFC_TUNE_BUDGET_MS=soon is not milliseconds > 0; using 500\n");
}

TEST_CASE("shape record: a forked child writes its own calls, not its parent's again") {
  TempDir dir("record-fork");
  const std::string record = dir.file("fork.record");
  REQUIRE(sfcconf_record_open(record.c_str()) == SFCCONF_OK);  // the writer thread runs from here on
  sfcconf_handle* conf = nullptr;
  REQUIRE(sfcconf_open(nullptr, nullptr, &conf) == SFCCONF_OK);
  sfcconf_answer a;
  auto query = [&] { return sfcconf_query(conf, 100, 200, 300, SFCCONF_F32, 2, &a); };
  for (int i = 0; i < 4; ++i) CHECK(query() == SFCCONF_OK);  // counted in the parent before the fork
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (int i = 0; i < 3; ++i) query();
    std::exit(0);  // exit() writes the child's 3 calls
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(query() == SFCCONF_OK);
  CHECK(query() == SFCCONF_OK);
  CHECK(sfcconf_record_close() == SFCCONF_OK);
  sfcconf_close(conf);
  CHECK(ShapeRecord::load(record).total_calls() == 4 + 3 + 2);
}
