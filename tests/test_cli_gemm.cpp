// `sfc-tune gemm` as a user runs it: results, JSON, and every bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support.hpp"

using sfc::test::run_cli;

namespace {
nlohmann::json last_json_line(const std::string& out) {
  const auto end = out.find_last_not_of('\n');
  const auto begin = out.rfind('\n', end);
  return nlohmann::json::parse(out.substr(begin == std::string::npos ? 0 : begin + 1, end - begin));
}
}  // namespace

TEST_CASE("gemm --check --json reports effective knobs, blocks and the error") {
  const auto r =
      run_cli("gemm 100 80 300 --k-layers 8 --kbf 8 --threads 2 --reps 2 --check --json --layout row");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto j = last_json_line(r.output);
  for (const char* key : {"m", "n", "k", "dtype", "threads", "k_layers", "k_block_factor", "bm", "bn", "bk",
                          "layout", "min_seconds", "mean_seconds", "gflops", "mean_gflops", "rel_error"})
    CHECK_MESSAGE(j.contains(key), key);
  // The headline is the fastest run, as tune and bench report it; the mean is beside it.
  CHECK(j["statistic"] == "min");
  CHECK(j["min_seconds"].get<double>() <= j["mean_seconds"].get<double>());
  CHECK(j["gflops"].get<double>() ==
        doctest::Approx(2.0 * 100 * 80 * 300 / j["min_seconds"].get<double>() * 1e-9));
  CHECK(j["gflops"].get<double>() >= j["mean_gflops"].get<double>());
  CHECK(j["k_layers"].get<int>() * j["k_block_factor"].get<int>() <=
        (300 + j["bk"].get<int>() - 1) / j["bk"].get<int>());
  CHECK(j["rel_error"].get<double>() <= j["error_bound"].get<double>());
  CHECK(j["layout"] == "row");
}

TEST_CASE("gemm rejects bad input with one clear line and exit code 2") {
  const char* bad[] = {
      "gemm 0 10 10",
      "gemm -5 10 10",
      "gemm abc 10 10",
      "gemm 10 10",
      "gemm 10 10 10 --k-layers 9",
      "gemm 10 10 10 --kbf 0",
      "gemm 10 10 10 --threads 0",
      "gemm 10 10 10 --dtype f16",
      "gemm 10 10 10 --layout diag",
      "gemm 10 10 10 --reps 0",
      "gemm 3000000000 10 10",
      "gemm 1000000000 1000000000 1000000000",
      "gemm 2000000 2000000 2 --layout row",
  };
  for (const char* args : bad) {
    const auto r = run_cli(args);
    INFO(args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(!r.output.empty());
  }
}

TEST_CASE("help documents every option") {
  const auto r = run_cli("help gemm");
  CHECK(r.exit_code == 0);
  for (const char* opt :
       {"--dtype", "--threads", "--k-layers", "--kbf", "--layout", "--reps", "--check", "--json"})
    CHECK_MESSAGE(r.output.find(opt) != std::string::npos, opt);
  CHECK(run_cli("--help").exit_code == 0);
}

TEST_CASE("cli: sizes, unknown commands and log levels are refused in one readable line, times carry units") {
  auto r = sfc::test::run_cli("gemm 0 5 5");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("M: must be >= 1, got 0") != std::string::npos);
  CHECK(r.output.find("1797693") == std::string::npos);  // not the whole range of a double
  r = sfc::test::run_cli("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("unknown command 'frobnicate'") != std::string::npos);
  CHECK(r.output.find("query") != std::string::npos);
  r = sfc::test::run_cli("--version", "SFC_LOG_LEVEL=bogus");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("SFC_LOG_LEVEL=bogus is not trace, debug, info") != std::string::npos);
  r = sfc::test::run_cli("--version");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("sfc-tune " SFC_VERSION_TEXT) != std::string::npos);
  CHECK(r.output.find("LIBXSMM") != std::string::npos);
  r = sfc::test::run_cli("gemm 64 64 64 --reps 2 --warmup 0",
                         "NO_COLOR=1 SFC_LOG_LEVEL=info SFC_COLD_BYTES=1048576");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("\x1b[") == std::string::npos);  // no colour escapes
  // The headline is the fastest run, the mean beside it, each with its unit.
  CHECK((r.output.find("fastest ") != std::string::npos &&
         r.output.find(" GFLOP/s), mean ") != std::string::npos));
  CHECK((r.output.find(" us (") != std::string::npos || r.output.find(" ms (") != std::string::npos));
}

TEST_CASE("cli: gemm spells the knob as tune does (--k-block-factor), and --kbf still works") {
  for (const char* spelling : {"--k-block-factor", "--kbf"}) {
    const auto r =
        sfc::test::run_cli(std::string("gemm 64 64 256 --reps 1 --warmup 0 --json ") + spelling + " 2",
                           "SFC_COLD_BYTES=1048576");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(last_json_line(r.output)["k_block_factor"] == 2);
  }
}
