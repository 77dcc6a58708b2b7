// `sfc-tune bench` as a user runs it: a tiny end-to-end run with every
// output, a peer that is not there, and every bad input (exit code 2).
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sfc/gemm_peer.hpp"
#include "sfc/platform.hpp"
#include "support.hpp"
#include "test_bench_support.hpp"
#include "test_db_support.hpp"
#include "test_predictor_support.hpp"

using sfc::test::run_cli;

namespace {

// Small cold footprint: the run (and its calibration) takes seconds, not minutes.
const std::string kFastEnvironment = "SFC_COLD_BYTES=4194304";

nlohmann::json last_json_line(const std::string& out) {
  const auto end = out.find_last_not_of('\n');
  const auto begin = out.rfind('\n', end);
  return nlohmann::json::parse(out.substr(begin == std::string::npos ? 0 : begin + 1, end - begin));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("bench: a tiny run prints the table, JSON, CSV and a plot a parser accepts") {
  const sfc::test::TempDir dir;
  const std::string svg = dir.file("plot.svg"), csv = dir.file("shapes.csv");
  const auto r = run_cli("bench --grid 24,40 --threads 2 --reps 1 --warmup 0 --config 1,1 --json --plot " +
                             svg + " --csv " + csv,
                         kFastEnvironment + " SFC_ONEDNN_LIBRARY=/nonexistent/libdnnl.so");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("# " SFC_TUNE_BINARY " bench --grid 24,40") != std::string::npos);
  const auto j = last_json_line(r.output);
  for (const char* key :
       {"whm_gflops", "ratio_vs_best_peer", "min_shape_ratio", "shapes", "command", "notes"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["shapes"].size() == 8);
  CHECK(j["whm_gflops"].contains("sfc-ca"));
  CHECK_FALSE(j["whm_gflops"].contains("onednn"));
  CHECK(j["notes"].dump().find("onednn skipped") != std::string::npos);
  for (const auto& shape : j["shapes"]) CHECK(shape["k_layers"] == 1);

  const std::string plot = read_file(svg);
  CHECK(sfc::test::xml_problem(plot) == "");
  CHECK(plot.find("id=\"series-sfc-ca\"") != std::string::npos);
  CHECK(plot.find("id=\"series-roofline\"") != std::string::npos);
  // A real XML parser too, where the machine has one.
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") == 0)
    CHECK(std::system(
              ("python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " + svg).c_str()) ==
          0);
  const std::string table = read_file(csv);
  CHECK(std::count(table.begin(), table.end(), '\n') == 9);  // header + 8 shapes
}

TEST_CASE("bench: --layout col --trans TN with alpha and beta gives every installed peer its column") {
  const auto r = run_cli(
      "bench --grid 24,40 --threads 1 --reps 1 --warmup 1 --config 1,1 --layout col --trans TN --alpha 2 "
      "--beta 0.5 --json",
      kFastEnvironment);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);  // exit 1 would mean a result differed from fp64
  const auto j = last_json_line(r.output);
  CHECK(j["layout"] == "col");
  const auto implementations = j["implementations"].get<std::vector<std::string>>();
  const auto in_ratio = j["in_peer_ratio"].get<std::vector<bool>>();
  REQUIRE(in_ratio.size() == implementations.size());
  CHECK(implementations.at(0) == "sfc-ca");
  for (const std::string& name : sfc::known_peer_names()) {
    const bool found = std::string(SFC_TEST_FOUND_PEERS).find("," + name + ",") != std::string::npos;
    const bool ran = std::find(implementations.begin(), implementations.end(), name) != implementations.end();
    CHECK_MESSAGE(ran == found, name);  // no peer is dropped for the call
  }
  for (const auto& shape : j["shapes"]) CHECK(shape["max_error_ratio"].get<double>() <= 1);
  // A generic BLIS runs and is listed, but the ratio names another peer, and a note says why.
  for (std::size_t i = 0; i < implementations.size(); ++i)
    if (implementations[i] == "blis" && !in_ratio[i]) {
      CHECK(j["notes"].dump().find("sub-configuration is 'generic'") != std::string::npos);
      CHECK(j["best_peer"] != "blis");
    }
}

TEST_CASE("bench: --config tuned, nn and policy take the answers, and the calibration, of --db") {
  const sfc::test::TempDir dir;
  // This machine at 2 threads tuned 24x24x256 (K: 4 blocks of 64) with winner (2, 1).
  sfc::TuningTable table =
      sfc::test::synthetic_table({sfc::test::synthetic_shape({24, 24, 256}, {2, 1})},
                                 {.gamma_gflops_per_core = 123, .beta_gbytes_per_s = 45});
  table.platform = sfc::detect_platform(2);
  const std::string file = dir.file("tuned.table");
  table.save(file);
  const std::string common = "bench --threads 2 --reps 1 --warmup 0 --vs openblas --json --db " + file;

  auto r = run_cli(common + " --grid 'm=24 n=24 k=256' --config tuned", kFastEnvironment);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  auto j = last_json_line(r.output);
  CHECK(j["shapes"][0]["k_layers"] == 2);
  CHECK(j["shapes"][0]["k_block_factor"] == 1);
  CHECK(j["roofline"]["gflops_per_core"] == 123);  // stored, not measured
  CHECK(r.output.find("calibrating") == std::string::npos);

  // 32x24x256 was never tuned: its nearest tuned shape's winner, or an error for tuned.
  r = run_cli(common + " --grid 'm=32 n=24 k=256' --config nn", kFastEnvironment);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json_line(r.output)["shapes"][0]["k_layers"] == 2);
  r = run_cli(common + " --grid 'm=32 n=24 k=256' --config tuned", kFastEnvironment);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("has no tuned 32x24x256") != std::string::npos);
  // The analytical model answers any shape from the stored calibration.
  r = run_cli(common + " --grid 'm=32 n=24 k=256' --config model", kFastEnvironment);
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  // The policy answers what sfc-tune query answers: the tuned shape exactly,
  // and a shape far from it from the model rather than the neighbour.
  struct Case {
    const char *grid, *shape, *tier;
  };
  for (const auto& [grid, shape, tier] :
       {Case{"m=24 n=24 k=256", "24 24 256", "exact"}, Case{"m=512 n=512 k=8192", "512 512 8192", "model"}}) {
    r = run_cli(common + " --grid '" + grid + "' --config policy", kFastEnvironment);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const auto q =
        run_cli(std::string("query ") + shape + " --threads 2 --json --db " + file, kFastEnvironment);
    REQUIRE_MESSAGE(q.exit_code == 0, q.output);
    const auto bench = last_json_line(r.output)["shapes"][0];
    const auto answer = last_json_line(q.output);
    CHECK(answer["tier"] == tier);
    CHECK(bench["k_layers"] == answer["k_layers"]);
    CHECK(bench["k_block_factor"] == answer["k_block_factor"]);
  }
}

TEST_CASE("bench: --shapes and --random take shapes as tune does") {
  const sfc::test::TempDir dir;
  std::ofstream(dir.file("mine.shapes")) << "# M N K\n24 40 24\n40 24 40\n";
  auto r = run_cli(
      "bench --shapes " + dir.file("mine.shapes") + " --vs none --reps 1 --warmup 0 --config 1,1 --json",
      kFastEnvironment);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  nlohmann::json j = last_json_line(r.output);
  REQUIRE(j["shapes"].size() == 2);
  CHECK(j["shapes"][0]["m"] == 24);
  CHECK(j["shapes"][1]["k"] == 40);
  r = run_cli("bench --random 2 --range 16:48 --seed 5 --vs none --reps 1 --warmup 0 --config 1,1 --json",
              kFastEnvironment);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(last_json_line(r.output)["shapes"].size() == 2);
}

TEST_CASE(
    "bench: SIGINT, SIGTERM and SIGHUP end the run after the current shape, which reports the shapes done") {
  // Each shape takes at least 0.2 s (the settling before each timing), so
  // 40 shapes outlast the signal, which comes once the first is logged.
  const sfc::test::TempDir dir;
  for (const int number : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(number);
    const std::string prefix = dir.file("signalled-" + std::to_string(number));
    sfc::test::CliProcess bench({"bench", "--grid", "m=16:640:+16 n=16 k=16", "--vs", "none", "--threads",
                                 "2", "--reps", "1", "--warmup", "0", "--config", "1,1", "--json"},
                                prefix, {kFastEnvironment});
    while (bench.running() && read_file(prefix + ".err").find("[1/40]") == std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    bench.signal(number);
    CHECK(bench.wait() == 128 + number);
    const std::string err = read_file(prefix + ".err");
    CHECK(err.find("sfc-tune: interrupted") != std::string::npos);
    CHECK(err.find("WHM GFLOP/s") != std::string::npos);  // the table of the shapes done
    const auto j = last_json_line(read_file(prefix + ".out"));
    CHECK(j["interrupted"] == true);
    CHECK(j["shapes"].size() >= 1);
    CHECK(j["shapes"].size() < 40);
    CHECK(j["notes"].dump().find("interrupted after " + std::to_string(j["shapes"].size()) +
                                 " of 40 shapes") != std::string::npos);
  }
}

TEST_CASE("bench: bad input is one clear error and exit code 2, before anything runs") {
  const sfc::test::TempDir dir;
  const std::string bad[] = {
      "bench",  // one of --grid, --shapes or --random is required
      "bench --grid 256 --random 3",
      "bench --shapes " + dir.file("missing.shapes"),
      "bench --grid 0,256",
      "bench --grid abc",
      "bench --grid 256,",
      "bench --grid 256 --vs mkl",
      "bench --grid 256 --vs openblas,",
      "bench --grid 256 --config 9,1",
      "bench --grid 256 --config 1",
      "bench --grid 256 --config fast",
      "bench --grid 256 --config tuned",   // needs --db
      "bench --grid 256 --config policy",  // needs --db
      "bench --grid 256 --config nn --db " + dir.file("missing.db"),
      "bench --grid 256 --dtype f16",
      "bench --grid 256 --layout diagonal",
      "bench --grid 256 --trans NT",  // the blocked entry is C = A*B
      "bench --grid 256 --layout row --trans XY",
      "bench --grid 256 --layout row --trans NN,XY",
      "bench --grid 256 --layout row --beta 0,x",
      "bench --grid 256 --trans NN,NT",  // variants need a plain entry too
      "bench --grid 256 --reps 0",
      "bench --grid 256 --threads 0",
      "bench --grid 256 --plot " + dir.file("no/such/dir/plot.svg"),
      "bench --grid 256 --csv " + dir.file("no/such/dir/out.csv"),
  };
  for (const std::string& args : bad) {
    const auto r = run_cli(args);
    INFO(args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("internal error") == std::string::npos);
    CHECK(r.output.find("calibrating") == std::string::npos);  // failed before measuring
  }
}
