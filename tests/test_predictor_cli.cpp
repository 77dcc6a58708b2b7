// sfc-tune query, calibrate and evaluate as a user runs them: answers, JSON,
// and exit code 2 with a one-line reason for bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "support.hpp"
#include "test_db_support.hpp"
#include "test_predictor_support.hpp"

using namespace sfc;
using sfc::test::region_shapes;
using sfc::test::run_cli;
using sfc::test::synthetic_table;

namespace {

// The last line of the output that is a JSON object.
nlohmann::json last_json(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line.front() == '{') last = line;
  REQUIRE_MESSAGE(!last.empty(), output);
  return nlohmann::json::parse(last);
}

// This machine's table of region_shapes(), calibrated; its calibration alone;
// and another CPU's table.
struct Tables {
  test::TempDir dir;
  std::string here = dir.file("here.sfctable"), there = dir.file("there.sfctable");
  std::string calibrated_only = dir.file("calibrated.sfctable");
  std::string uncalibrated = dir.file("uncalibrated.sfctable");
  std::string there_hash;
  Tables() {
    TuningTable t = synthetic_table(region_shapes(), {200, 60});
    t.platform = detect_platform(2);
    t.save(here);
    TuningTable raw = t;
    raw.calibration = {};
    raw.save(uncalibrated);
    TuningTable no_shapes = t;
    no_shapes.shapes.clear();
    no_shapes.save(calibrated_only);
    t.platform = test::foreign_machine(2);
    t.save(there);
    there_hash = t.platform.hash();
  }
};

// A database of this machine: region_shapes() plus their doubles in M.
std::string make_database(const test::TempDir& dir, const std::string& name, std::vector<TunedShape> shapes) {
  const std::string path = dir.file(name);
  TuningStore store(path, TuningStore::Mode::create);
  test::record_synthetic(store, detect_platform(2), shapes);
  store.save_calibration(detect_platform(2).hash(), {200, 60});
  return path;
}

// `export --format table` of a selection (`--dtype X`, `--layout Y`) that
// `from` holds nothing of: refused with `message`, and no file left behind.
void check_empty_selection_refused(const test::TempDir& dir, const std::string& from,
                                   const std::string& selection, const std::string& message) {
  const std::string out = dir.file("empty.table");
  const auto r = run_cli("export --db " + from + " --format table " + selection + " -o " + out);
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
  CHECK_FALSE(std::filesystem::exists(out));
}

}  // namespace

TEST_CASE("cli query: tiers, distance and nearest shape, as text and JSON") {
  const Tables t;
  auto r = run_cli("query 1024 256 4096 --threads 2 --json --table " + t.here);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  nlohmann::json j = last_json(r.output);
  CHECK(j["tier"] == "exact");
  CHECK(j["k_layers"] == 2);
  CHECK(j["k_block_factor"] == 4);
  CHECK(j["distance"] == 0.0);
  CHECK(j["nearest"]["k"] == 4096);
  // --db takes a table as every command does; --table is the same option.
  r = run_cli("query 1024 256 4096 --threads 2 --json --db " + t.here);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["k_layers"] == 2);

  r = run_cli("query 1100 1000 1000 --threads 2 --json --table " + t.here);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  j = last_json(r.output);
  CHECK(j["tier"] == "nearest");
  CHECK(j["k_layers"] == 1);
  CHECK(j["distance"].get<double>() > 0);
  CHECK(r.output.find("nearest tuned shape 1024x1024x1024") != std::string::npos);

  r = run_cli("query 16 16 1048576 --threads 2 --json --table " + t.calibrated_only);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["tier"] == "model");

  // A thread count never tuned: the model, from the 2-thread calibration.
  r = run_cli("query 100 100 100 --dtype f64 --threads 3 --json --table " + t.here);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  j = last_json(r.output);
  CHECK(j["tier"] == "model");
  CHECK(j["platform"] == "exact");
  CHECK(j["distance"].is_null());
  for (const char* threads : {"1", "16"}) {
    r = run_cli(std::string("query 700 1500 3000 --json --threads ") + threads + " --table " + t.here);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(last_json(r.output)["tier"] == "model");
    CHECK(r.output.find("(tier model, platform exact") != std::string::npos);
  }
  // Without any calibration a new thread count gets the default.
  r = run_cli("query 100 100 100 --threads 3 --json --table " + t.uncalibrated);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["tier"] == "default");
}

TEST_CASE("cli query: a foreign machine's table is refused unless forced or named, answers say the match") {
  const Tables t;
  auto r = run_cli("query 256 256 256 --threads 2 --table " + t.there);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("Some Other CPU") != std::string::npos);
  CHECK(r.output.find(t.there_hash) != std::string::npos);
  CHECK(r.output.find("isa: tuned") != std::string::npos);
  r = run_cli("query 256 256 256 --threads 2 --json --table " + t.there + " --platform " + t.there_hash);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["tier"] == "exact");
  CHECK(last_json(r.output)["platform"] == "foreign");
  for (const std::string& force : {std::string(" --platform any"), std::string(" --platform this")}) {
    r = run_cli("query 256 256 256 --threads 2 --json --table " + t.there + force);
    CHECK(r.exit_code == (force.ends_with("any") ? 0 : 2));
  }
  r = run_cli("query 256 256 256 --threads 2 --json --table " + t.there, "SFC_PLATFORM=any");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["platform"] == "foreign");
  r = run_cli("query 256 256 256 --threads 2 --table " + t.there + " --platform elsewhere");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("platform 'elsewhere' is none of") != std::string::npos);
  r = run_cli("query 256 256 256 --threads 2 --json --table " + t.here);
  CHECK(last_json(r.output)["platform"] == "exact");
}

TEST_CASE("cli query: bad input exits with 2 and one line") {
  const Tables t;
  for (const std::string& args :
       {"query 0 64 64 --table " + t.here, "query 64 -3 64 --table " + t.here,
        "query 64 64 x --table " + t.here, "query 64 64 64 --table " + t.dir.file("missing"),
        "query 64 64 64 --db " + t.dir.file("missing.db"),
        "query 64 64 64 --table " + t.here + " --db " + t.here}) {
    const auto r = run_cli(args);
    CHECK_MESSAGE(r.exit_code == 2, args, "\n", r.output);
  }
  std::ofstream(t.dir.file("cut.sfctable")) << "sfc-table 1\nplatform cpu_model X\n";
  const auto r = run_cli("query 64 64 64 --table " + t.dir.file("cut.sfctable"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("cut.sfctable") != std::string::npos);
}

TEST_CASE(
    "cli: a table whose platform block is edited, duplicated or missing is refused in one line, nothing is "
    "written") {
  const Tables t;
  const std::string good = test::slurp(t.here);
  const std::size_t at = good.find("platform cores "), end = good.find('\n', at) + 1;
  const std::string line = good.substr(at, end - at);
  std::string without;
  for (std::size_t from = 0; from < good.size();) {
    const std::size_t next = good.find('\n', from) + 1;
    if (good.compare(from, 9, "platform ") != 0) without += good.substr(from, next - from);
    from = next;
  }
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {good.substr(0, at) + "platform cores 1023\n" + good.substr(end), "does not match its fields"},
      {good.substr(0, end) + line + good.substr(end), "appears twice"},
      {without, "incomplete"}};
  for (const auto& [text, reason] : damaged) {
    const std::string path = t.dir.file("damaged.sfctable"), out = t.dir.file("out.table");
    test::write_file(path, text);
    for (const std::string& args : {"query 64 64 64 --table " + path, "db info --db " + path,
                                    "export --db " + path + " --format table -o " + out,
                                    "bench --grid 64 --vs none --config nn --db " + path}) {
      const auto r = run_cli(args);
      CHECK_MESSAGE(r.exit_code == 2, args, "\n", r.output);
      CHECK_MESSAGE(r.output.find(reason) != std::string::npos, args, "\n", r.output);
      CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    }
    CHECK_FALSE(std::filesystem::exists(t.dir.file("out.table")));
    CHECK(test::slurp(path) == text);
  }
}

TEST_CASE("cli export: an older table is written again as a current one, csv from a table is refused") {
  const Tables t;
  const std::string copy = t.dir.file("copy.table");
  auto r = run_cli("export --db " + t.here + " --format table -o " + copy);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(test::slurp(copy) == test::slurp(t.here));
  r = run_cli("export --db " + t.here + " -o " + t.dir.file("x.csv"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("holds winners only") != std::string::npos);
  r = run_cli("db info --json --db " + t.here);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const nlohmann::json info = last_json(r.output);
  CHECK(info["format"] == "table");
  CHECK(info["platforms"][0]["match"]["platform"] == "exact");
  CHECK(info["platforms"][0]["results"][0]["shapes"] == 27);
}

TEST_CASE("cli import and merge: a tuning table joins a database, and exports back as it was") {
  const Tables t;
  const test::TempDir dir;
  // The table alone: every time comes back, the winners and the calibration too.
  const std::string imported = dir.file("imported.db"), again = dir.file("again.table");
  auto r = run_cli("import " + t.here + " --db " + imported + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const TuningTable original = TuningTable::load(t.here);
  CHECK(last_json(r.output)["measurements"] == std::int64_t(original.shapes.size()) * kConfigCount);
  r = run_cli("import " + t.here + " --db " + imported + " --json");  // twice adds nothing
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["measurements"] == 0);
  r = run_cli("export --db " + imported + " --format table -o " + again);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  TuningTable back = TuningTable::load(again);
  TuningTable sorted = original;
  const auto by_shape = [](const TunedShape& x, const TunedShape& y) {
    return std::tuple(x.shape.m, x.shape.n, x.shape.k) < std::tuple(y.shape.m, y.shape.n, y.shape.k);
  };
  std::sort(back.shapes.begin(), back.shapes.end(), by_shape);
  std::sort(sorted.shapes.begin(), sorted.shapes.end(), by_shape);
  CHECK(back.calibration.gamma_gflops_per_core == doctest::Approx(200));
  REQUIRE(back.shapes.size() == original.shapes.size());
  for (std::size_t i = 0; i < back.shapes.size(); ++i) {
    CHECK(back.shapes[i].winner() == sorted.shapes[i].winner());
    CHECK(back.shapes[i].seconds == sorted.shapes[i].seconds);
  }
  // A pruned or ranked table: a screen's time may read below the winner's,
  // and the winner stays the table's.
  TuningTable screened = original;
  TunedShape& first = screened.shapes.front();
  first.seconds[std::size_t(Knobs{4, 4}.index())] = first.seconds[std::size_t(first.winner().index())] / 2;
  const std::string screened_path = dir.file("screened.table"), screened_db = dir.file("screened.db");
  screened.save(screened_path);
  r = run_cli("merge " + screened_path + " -o " + screened_db);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_cli("export --db " + screened_db + " --format table -o " + again);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  bool found = false;
  for (const TunedShape& s : TuningTable::load(again).shapes)
    if (to_string(s.shape) == to_string(first.shape)) {
      found = true;
      CHECK(s.winner() == first.winner());
      CHECK(s.seconds == first.seconds);
    }
  CHECK(found);
  // A table extended with a database's shapes: merge takes both.
  std::vector<TunedShape> extra = {test::synthetic_shape({3000, 5000, 7000}, {1, 5})};
  const std::string db = make_database(dir, "extra.db", extra), merged = dir.file("merged.db");
  r = run_cli("merge " + t.here + " " + db + " -o " + merged);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_cli("query 3000 5000 7000 --threads 2 --db " + merged);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("k_layers=1 k_block_factor=5 (tier exact") != std::string::npos, r.output);
  r = run_cli("db info --json --db " + merged);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["platforms"][0]["results"][0]["shapes"] == original.shapes.size() + 1);
  // A broken table is refused before the output exists.
  const std::string broken = dir.file("broken.table"), none = dir.file("none.db");
  std::ofstream(broken) << "sfc-table 3\nplatform\n";
  r = run_cli("merge " + broken + " " + db + " -o " + none);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(none));
}

TEST_CASE("cli export: --dtype keeps one element type, in a table and in csv") {
  const test::TempDir dir;
  std::vector<TunedShape> shapes = region_shapes();
  shapes.push_back(test::synthetic_shape({512, 512, 512}, {1, 3}, 2, DType::bf16));
  shapes.push_back(test::synthetic_shape({640, 512, 512}, {1, 3}, 2, DType::bf16));
  const std::string db = make_database(dir, "mixed.db", shapes);
  const std::string table = dir.file("bf16.table");
  auto r = run_cli("export --db " + db + " --format table --dtype bf16 -o " + table + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["winners"] == 2);
  const TuningTable bf16 = TuningTable::load(table);
  REQUIRE(bf16.shapes.size() == 2);
  CHECK(bf16.shapes[0].dtype == DType::bf16);
  CHECK(bf16.calibration.gamma_gflops_per_core > 0);  // the platform's calibration goes with it
  // A table written again keeps the filter; csv too, measurements included.
  r = run_cli("export --db " + db + " --format table -o " + dir.file("all.table"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_cli("export --db " + dir.file("all.table") + " --format table --dtype f32 -o " +
              dir.file("f32.table"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(TuningTable::load(dir.file("f32.table")).shapes.size() == 27);
  r = run_cli("export --db " + db + " --all --dtype bf16 -o " + dir.file("bf16.csv") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["measurements"] == 2 * 64);
  CHECK(test::slurp(dir.file("bf16.csv")).find(",f32,") == std::string::npos);
  r = run_cli("export --db " + db + " --dtype f16 -o " + dir.file("x.table"));
  CHECK(r.exit_code == 2);
  // Nothing of that type: refused, no empty file left behind.
  for (const std::string& from : {db, dir.file("all.table")})
    check_empty_selection_refused(dir, from, "--dtype f64", "holds no f64 results");
  r = run_cli("export --db " + db + " --dtype f64 -o " + dir.file("f64.csv"));
  CHECK(r.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.file("f64.csv")));
}

TEST_CASE("cli export: --layout keeps one entry, and with --all its measurements import beside a new run") {
  const test::TempDir dir;
  std::vector<TunedShape> shapes = region_shapes();  // blocked
  for (const GemmShape& shape : {GemmShape{512, 512, 512}, GemmShape{640, 512, 512}}) {
    shapes.push_back(test::synthetic_shape(shape, {2, 3}));
    shapes.back().layout = Layout::row_major;
  }
  const std::string db = make_database(dir, "both.db", shapes);
  auto r = run_cli("export --db " + db + " --format table --layout blocked -o " + dir.file("blocked.table"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(TuningTable::load(dir.file("blocked.table")).shapes.size() == shapes.size() - 2);
  // The row-major entry's measurements, imported into a fresh database: what
  // a splice of one entry tuned again beside the other's old run starts from.
  r = run_cli("export --db " + db + " --all --layout row -o " + dir.file("row.csv") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["winners"] == 2);
  CHECK(last_json(r.output)["measurements"] == 2 * 64);
  CHECK(test::slurp(dir.file("row.csv")).find(",blocked,") == std::string::npos);
  r = run_cli("import " + dir.file("row.csv") + " --db " + dir.file("row.db"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_cli("export --db " + dir.file("row.db") + " --format table -o " + dir.file("row.table"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const TuningTable row = TuningTable::load(dir.file("row.table"));
  REQUIRE(row.shapes.size() == 2);
  CHECK(row.shapes[0].layout == Layout::row_major);
  CHECK(row.shapes[0].k_layers == 2);
  CHECK(row.shapes[0].k_block_factor == 3);
  // A selection that holds nothing is refused, from a database and from a table, and leaves no file.
  for (const std::string& from : {db, dir.file("blocked.table")})
    check_empty_selection_refused(dir, from, "--layout col", "holds no col-major results");
  r = run_cli("export --db " + db + " --dtype bf16 --layout row -o " + dir.file("x.csv"));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("holds no bf16 row-major results") != std::string::npos);
  r = run_cli("export --db " + db + " --layout rows -o " + dir.file("x.csv"));
  CHECK(r.exit_code == 2);
}

TEST_CASE("cli calibrate: stores gamma and beta that the model tier then uses") {
  const test::TempDir dir;
  const std::string db = dir.file("calibrated.db");
  auto r = run_cli("calibrate --threads 2 --json --db " + db, "SFC_COLD_BYTES=16777216");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const nlohmann::json j = last_json(r.output);
  CHECK(j["gamma_gflops_per_core"].get<double>() > 0);
  CHECK(j["beta_gbytes_per_s"].get<double>() > 0);
  r = run_cli("query 512 512 512 --threads 2 --json --db " + db);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["tier"] == "model");
}

TEST_CASE("cli evaluate: regret of every predictor on held-out and separate test shapes") {
  const test::TempDir dir;
  const std::string db = make_database(dir, "train.db", region_shapes());
  auto r = run_cli("evaluate --db " + db + " --holdout 0.3 --seed 3 --threads 2 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  nlohmann::json j = last_json(r.output);
  CHECK(j["test_shapes"] == 8);  // 30% of 27
  for (const char* p : {"nearest", "vote", "model", "policy"}) {
    INFO(p);
    REQUIRE(j["regret"].contains(p));
    for (const char* stat : {"mean", "median", "p95", "max"}) {
      const double v = j["regret"][p][stat].get<double>();
      CHECK(v >= 0);
      CHECK(v < 1);  // synthetic configurations are at most 56% apart
    }
  }
  CHECK(j["regret"]["policy"]["max"].get<double>() >= j["regret"]["policy"]["median"].get<double>());

  // Separate test shapes: a second database, and a shape file whose shapes
  // are tuned in the training database (no GEMM needs to run).
  std::vector<TunedShape> others;
  for (std::int64_t m : {512, 2048}) others.push_back(test::synthetic_shape({m, 1024, 4096}, {2, 4}));
  const std::string test_db = make_database(dir, "test.db", others);
  r = run_cli("evaluate --db " + db + " --test-db " + test_db + " --threads 2 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  j = last_json(r.output);
  CHECK(j["test_shapes"] == 2);
  CHECK(j["regret"]["nearest"]["max"] == 0.0);  // the neighbours in K share the winner
  CHECK(j["floor"].is_null());

  // The same test shapes tuned again, where noise made (2, 3) win: a perfect
  // answer by that timing loses one step (4%) by the test's times.
  std::vector<TunedShape> again;
  for (std::int64_t m : {512, 2048, 8192}) again.push_back(test::synthetic_shape({m, 1024, 4096}, {2, 3}));
  const std::string again_db = make_database(dir, "again.db", again);
  r = run_cli("evaluate --db " + db + " --test-db " + test_db + " --floor-db " + again_db +
              " --threads 2 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  j = last_json(r.output);
  CHECK(j["floor"]["shapes"] == 2);  // 8192 is not a test shape
  CHECK(j["floor"]["mean"].get<double>() == doctest::Approx(0.04).epsilon(1e-4));
  CHECK(r.output.find("the winners of --floor-db on 2 of the shapes") != std::string::npos);
  // A second tuning of other shapes says nothing about these: refused.
  const std::string unrelated_db = make_database(dir, "unrelated.db", {again.back()});
  r = run_cli("evaluate --db " + db + " --test-db " + test_db + " --floor-db " + unrelated_db +
              " --threads 2");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("holds none of the test shapes") != std::string::npos);

  std::ofstream(dir.file("tests.shapes")) << "# M N K\n1024 1024 4096\n256 4096 256\n";
  r = run_cli("evaluate --db " + db + " --test-shapes " + dir.file("tests.shapes") + " --threads 2 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["test_shapes"] == 2);
}

TEST_CASE("cli evaluate: a range hold-out trains inside the box and tests beyond it, by tier and distance") {
  const test::TempDir dir;
  // region_shapes(): {256, 1024, 4096}^3; trained up to 1024, the 19 shapes with a 4096 are the tests.
  const std::string db = make_database(dir, "train.db", region_shapes());
  auto r = run_cli("evaluate --db " + db + " --train-max 1024 --threads 2 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  nlohmann::json j = last_json(r.output);
  CHECK(j["test_shapes"] == 19);
  CHECK(j["regret"].contains("model"));
  int answered = 0;
  for (const auto& [tier, row] : j["by_tier"].items()) answered += row["shapes"].get<int>();
  CHECK(answered == 19);
  int binned = 0;
  for (const auto& row : j["by_distance"]) {
    CHECK(row["from"].get<double>() >= 2);  // a factor of 4 beyond the box at least
    binned += row["shapes"].get<int>();
  }
  CHECK(binned == 19);
  CHECK(r.output.find("mean regret by log2 distance") != std::string::npos);
  // Nothing beyond the box, or nothing inside it: a clear refusal.
  for (const char* max : {"4096", "100"}) {
    r = run_cli("evaluate --db " + db + " --threads 2 --train-max " + max);
    CHECK(r.exit_code == 2);
  }
  r = run_cli("evaluate --db " + db + " --threads 2 --train-max 1024 --holdout 0.2");
  CHECK(r.exit_code == 2);
}

TEST_CASE("cli evaluate: untuned test shapes are timed on the spot") {
  const test::TempDir dir;
  const std::string db = make_database(dir, "train.db", region_shapes());
  // One K block: all 64 configurations are the same plan, timed once.
  std::ofstream(dir.file("tiny.shapes")) << "24 24 24\n";
  const auto r = run_cli(
      "evaluate --db " + db + " --test-shapes " + dir.file("tiny.shapes") + " --threads 2 --reps 2 --json",
      "SFC_COLD_BYTES=1048576");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const nlohmann::json j = last_json(r.output);
  CHECK(j["test_shapes"] == 1);
  CHECK(j["regret"]["policy"]["max"].get<double>() < 0.5);  // one plan: only timing noise
}

TEST_CASE("cli evaluate: needs exactly one source of test shapes") {
  const test::TempDir dir;
  const std::string db = make_database(dir, "train.db", region_shapes());
  for (const std::string& args :
       {"evaluate --db " + db, "evaluate --db " + db + " --holdout 0.2 --test-db " + db,
        "evaluate --db " + db + " --holdout 1.5", "evaluate --db " + db + " --holdout 0",
        "evaluate --db " + dir.file("missing.db") + " --holdout 0.2",
        "evaluate --db " + db + " --test-shapes " + dir.file("missing.shapes")}) {
    const auto r = run_cli(args + " --threads 2");
    CHECK_MESSAGE(r.exit_code == 2, args, "\n", r.output);
  }
}

TEST_CASE("cli query and db info: a folder of tables serves this machine's and lists every table") {
  const test::TempDir dir;
  TuningTable table = synthetic_table(region_shapes(), {200, 60});
  table.platform = detect_platform(2);
  const std::string here = table.platform.hash() + "-f32-t2.table";
  table.save(dir.file(here));
  table.platform = test::foreign_machine(2);
  const std::string there = table.platform.hash() + "-f32-t2.table";
  table.save(dir.file(there));
  const std::string folder = dir.path().string();

  auto r = run_cli("query 1024 1024 1024 --threads 2 --json --db " + folder, "SFC_VERBOSE=1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["tier"] == "exact");
  CHECK(last_json(r.output)["platform"] == "exact");
  // SFC_VERBOSE says which file serves f32 at 2 threads.
  CHECK(r.output.find("tuning_choice,dtype=f32,threads=2,file=" + dir.file(here)) != std::string::npos);

  r = run_cli("db info --json --db " + folder);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const nlohmann::json j = last_json(r.output);
  REQUIRE(j["tables"].size() == 2);
  for (const nlohmann::json& t : j["tables"]) {
    const bool is_here = std::filesystem::path(t["file"].get<std::string>()).filename() == here;
    CHECK(t["match"] == (is_here ? "exact" : "foreign"));
    CHECK(t["chosen_for"].size() == (is_here ? 1u : 0u));
  }

  // db tables lists what SFC_TUNING names; unset, in a build tree (no installed tables) it says so.
  r = run_cli("db tables --json", "SFC_TUNING=" + folder);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json(r.output)["tables"].size() == 2);
  r = run_cli("db tables", "env -u SFC_TUNING");
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find("SFC_TUNING is unset") != std::string::npos, r.output);

  std::filesystem::remove(dir.file(here));
  r = run_cli("query 1024 1024 1024 --threads 2 --db " + folder);
  CHECK(r.exit_code == 2);
  // The refusal names the machine its tables are for.
  CHECK_MESSAGE(r.output.find("1 table of " + table.platform.hash()) != std::string::npos, r.output);
}

TEST_CASE("cli: reads never create a database, and calibrate creates one only where --db names it") {
  const test::TempDir dir;
  const std::string in_dir = "cd " + dir.path().string() + " &&";
  auto r = run_cli("query 512 512 512 --threads 2", in_dir);
  CHECK(r.exit_code != 0);
  r = run_cli("db info", in_dir);
  CHECK(r.exit_code != 0);
  r = run_cli("calibrate --threads 2", in_dir);
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find("--db") != std::string::npos, r.output);
  CHECK(std::filesystem::is_empty(dir.path()));
}
