// The benchmark's writers: table, CSV, JSON and the SVG plot.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include <spdlog/fmt/fmt.h>

#include "sfc/arch_context.hpp"
#include "sfc/bench_prepare.hpp"
#include "sfc/bench_report.hpp"
#include "sfc/fma_peak.hpp"
#include "test_bench_support.hpp"

namespace {

sfc::BenchContext test_context() {
  sfc::BenchContext c;
  c.command_line = "sfc-tune bench --grid 64,128 --plot 'a&b<c>.svg'";  // needs escaping in XML
  c.platform = "Test CPU";
  c.threads = 2;
  c.config_source = "best";
  c.libraries = {"A 1.0 (/lib/a.so)", "B 2.0 (/lib/b.so)"};
  c.roofline = sfc::Roofline::from_calibration({100, 10}, sfc::DType::f32, 2, "test");
  return c;
}

}  // namespace

TEST_CASE("bench: the table starts with the command line and holds every figure") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  std::ostringstream out;
  sfc::write_table(out, test_context(), result, sfc::summarize(result));
  const std::string table = out.str();
  CHECK(table.rfind("# sfc-tune bench --grid 64,128", 0) == 0);
  for (const char* text :
       {"sfc-ca", " a ", " b ", "64x64x64", "128x128x128", "WHM GFLOP/s", "best peer (a): 1.200",
        "lowest per-shape ratio to the best peer: 0.500 (64x64x64)", "2,4", "# peer: A 1.0"})
    CHECK_MESSAGE(table.find(text) != std::string::npos, text);
  CHECK(table.find("standard deviation exceeds") == std::string::npos);  // no shape was noisy
  CHECK(table.find("pass by pass") == std::string::npos);                // one pass
}

TEST_CASE("bench: with several passes the table and JSON give the ratio of each") {
  sfc::BenchResult result = sfc::test::two_shape_result();
  for (auto& shape : result.shapes) shape.passes = {shape.timings, shape.timings};
  result.shapes[1].passes[1][0].min = 8e-5;  // SFC-CA's large shape, twice as slow in pass 1
  const sfc::BenchSummary summary = sfc::summarize(result);
  std::ostringstream out;
  sfc::write_table(out, test_context(), result, summary);
  CHECK(out.str().find("best peer (a): 1.200 (pass by pass: 1.200, 0.667)") != std::string::npos);
  const nlohmann::json j = sfc::to_json(test_context(), result, summary);
  REQUIRE(j["pass_ratios_vs_best_peer"].size() == 2);
  CHECK(j["pass_ratios_vs_best_peer"][1].get<double>() == doctest::Approx(6.0 / 9.0));
}

TEST_CASE("bench: with an FMA peak the table and JSON give each implementation's share of it") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  sfc::BenchContext context = test_context();
  const sfc::BenchSummary summary = sfc::summarize(result);
  {
    std::ostringstream out;
    sfc::write_table(out, context, result, summary);
    CHECK(out.str().find("FMA peak") == std::string::npos);  // not measured: not shown
    CHECK(sfc::to_json(context, result, summary)["fma_peak_gflops"].is_null());
  }
  context.peak_gflops = 2 * summary.whm_gflops[0];
  std::ostringstream out;
  sfc::write_table(out, context, result, summary);
  const std::string table = out.str();
  CHECK(table.find(fmt::format("# FMA peak: {:.1f} GFLOP/s on 2 threads", context.peak_gflops)) !=
        std::string::npos);
  const auto row = table.find("WHM / FMA peak");
  REQUIRE(row != std::string::npos);
  CHECK(table.substr(row, table.find('\n', row) - row).find(" 0.500") != std::string::npos);  // sfc-ca
  CHECK(sfc::to_json(context, result, summary)["fma_peak_gflops"].get<double>() ==
        doctest::Approx(context.peak_gflops));
}

TEST_CASE("bench: a peak some GEMM beat is called measured low, and no ratio to it is shown") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  sfc::BenchContext context = test_context();
  const sfc::BenchSummary summary = sfc::summarize(result);
  context.peak_gflops = sfc::highest_measured_gflops(result) / 2;
  context.peak_measured_low = true;
  context.peak_remeasured = true;
  std::ostringstream out, svg;
  sfc::write_table(out, context, result, summary);
  const std::string table = out.str();
  CHECK(table.find("# note: the FMA peak was measured low (busy machine?): ratios to it are not shown") !=
        std::string::npos);
  CHECK(table.find("again after the shapes") != std::string::npos);
  CHECK(table.find("WHM / FMA peak") == std::string::npos);
  sfc::write_svg(svg, context, result);
  CHECK(svg.str().find("class=\"fma-peak\"") == std::string::npos);
  CHECK(svg.str().find("FMA peak was measured low") != std::string::npos);
  CHECK(sfc::to_json(context, result, summary)["peak_measured_low"] == true);
}

TEST_CASE("bench: a peak below a measured rate is measured again, and called low if still below") {
  sfc::BenchOptions options;
  options.threads = 1;
  sfc::BenchResult result = sfc::test::two_shape_result();
  sfc::BenchContext context = test_context();
  context.peak_gflops = 1e9;  // above anything measured: kept as is
  CHECK_FALSE(sfc::recheck_peak(options, result, context));
  CHECK_FALSE(context.peak_remeasured);
  CHECK_FALSE(context.peak_measured_low);
  if (sfc::fma_peak_gflops(1) <= 0) return;  // no FMA loop on this CPU: nothing to measure again
  context.peak_gflops = 1e-6;                // below every rate: measured again
  result.shapes[0].timings[0].min = 1e-15;   // and one GEMM faster than any CPU
  CHECK(sfc::recheck_peak(options, result, context));
  CHECK(context.peak_remeasured);
  CHECK(context.peak_gflops > 1);  // the new measurement, the higher of the two
  CHECK(context.peak_measured_low);
}

TEST_CASE("bench: the highest measured rate is the fastest run of any shape and implementation") {
  sfc::BenchResult result = sfc::test::two_shape_result();
  result.statistic = sfc::Statistic::mean;  // the mean does not matter here
  double highest = 0;
  for (const sfc::ShapeMeasurement& m : result.shapes)
    for (const sfc::Timing& t : m.timings) highest = std::max(highest, m.shape.flops() / t.min / 1e9);
  CHECK(sfc::highest_measured_gflops(result) == doctest::Approx(highest));
  CHECK(sfc::highest_measured_gflops(sfc::BenchResult{}) == 0);
}

TEST_CASE("bench: a peak of the tile unit is named so in the table, the JSON and the plot") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  sfc::BenchContext context = test_context();
  const sfc::BenchSummary summary = sfc::summarize(result);
  context.peak_gflops = 4 * summary.whm_gflops[0];
  CHECK(sfc::to_json(context, result, summary)["peak_unit"] == "fma");
  context.peak_on_tiles = true;
  std::ostringstream table, svg;
  sfc::write_table(table, context, result, summary);
  sfc::write_svg(svg, context, result);
  CHECK(table.str().find(fmt::format("# tile peak: {:.1f} GFLOP/s on 2 threads (bf16 tile products",
                                     context.peak_gflops)) != std::string::npos);
  const auto row = table.str().find("WHM / tile peak");
  REQUIRE(row != std::string::npos);
  CHECK(table.str().substr(row, table.str().find('\n', row) - row).find(" 0.250") != std::string::npos);
  CHECK(table.str().find("FMA peak") == std::string::npos);
  CHECK(svg.str().find(fmt::format("tile peak {:.0f} GFLOP/s", context.peak_gflops)) != std::string::npos);
  CHECK(sfc::to_json(context, result, summary)["peak_unit"] == "amx");
}

TEST_CASE("bench: the tile peak is measured where the CPU and the OS allow AMX, and is 0 elsewhere") {
  const double peak = sfc::tile_peak_gflops(1);
  if (sfc::amx_bf16_usable()) {
    CHECK(peak > 1);    // billions of bf16 products a second
    CHECK(peak < 1e5);  // and not hundreds of trillions
  } else {
    CHECK(peak == 0);
  }
}

TEST_CASE("bench: the FMA peak is measured on AVX2 and AVX-512 CPUs") {
  const double peak = sfc::fma_peak_gflops(1);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    CHECK(peak > 1);    // a core does billions of FMAs a second
    CHECK(peak < 1e4);  // and not trillions
  } else {
    CHECK(peak == 0);
  }
  CHECK(sfc::fma_peak_gflops(0) >= 0);  // no threads asked: one, not a crash
}

TEST_CASE("bench: the table marks a shape whose runs varied a lot") {
  sfc::BenchResult result = sfc::test::two_shape_result();
  result.shapes[1].timings[2].stddev = 0.5 * result.shapes[1].timings[2].mean;
  std::ostringstream out;
  sfc::write_table(out, test_context(), result, sfc::summarize(result));
  const std::string table = out.str();
  const auto row = table.find("128x128x128");
  CHECK(table.find(" *\n", row) < table.find('\n', row) + 1);
  CHECK(table.find("* 1 shape(s)") != std::string::npos);
}

TEST_CASE("bench: CSV has a header and one row per shape") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  std::ostringstream out;
  sfc::write_csv(out, result, sfc::summarize(result));
  std::istringstream lines(out.str());
  std::string header, row;
  std::getline(lines, header);
  CHECK(header.rfind("m,n,k,k_layers,k_block_factor,roofline_gflops,sfc-ca_gflops,", 0) == 0);
  int rows = 0;
  while (std::getline(lines, row)) {
    ++rows;
    CHECK(std::count(row.begin(), row.end(), ',') == std::count(header.begin(), header.end(), ','));
  }
  CHECK(rows == 2);
}

TEST_CASE("bench: JSON carries the figures the issue names") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  const nlohmann::json j = sfc::to_json(test_context(), result, sfc::summarize(result));
  CHECK(j["whm_gflops"].size() == 3);
  CHECK(j["whm_gflops"].contains("sfc-ca"));
  CHECK(j["ratio_vs_best_peer"].get<double>() == doctest::Approx(1.2));
  CHECK(j["min_shape_ratio"].get<double>() == doctest::Approx(0.5));
  CHECK(j["best_peer"] == "a");
  REQUIRE(j["shapes"].size() == 2);
  CHECK(j["shapes"][1]["k_layers"] == 2);
  CHECK(j["shapes"][1]["gflops"].contains("b"));
  // One line: what --json prints last.
  CHECK(j.dump().find('\n') == std::string::npos);
}

TEST_CASE("bench: the SVG plot is well-formed and draws every series and the roofline") {
  const sfc::BenchResult result = sfc::test::two_shape_result();
  std::ostringstream out;
  sfc::write_svg(out, test_context(), result);
  const std::string svg = out.str();
  CHECK(sfc::test::xml_problem(svg) == "");
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  for (const char* id : {"series-sfc-ca", "series-a", "series-b", "series-roofline"})
    CHECK_MESSAGE(svg.find(std::string("id=\"") + id + "\"") != std::string::npos, id);
  // Separate shapes are not a trend: a marker per shape, nothing joins them.
  CHECK(svg.find("<polyline") == std::string::npos);
  CHECK(svg.find("<path") == std::string::npos);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find("a&amp;b&lt;c&gt;.svg") != std::string::npos);
  // Shapes run along x by arithmetic intensity: 64^3 (21.3 flop/B) before 128^3 (42.7).
  CHECK(svg.find("64x64x64") < svg.find("128x128x128"));
}

TEST_CASE("bench: the XML check itself catches broken documents") {
  using sfc::test::xml_problem;
  CHECK(xml_problem("<svg><g></g></svg>") == "");
  CHECK(xml_problem("<svg><g></svg>") != "");
  CHECK(xml_problem("<svg>a & b</svg>") != "");
  CHECK(xml_problem("<svg x=1></svg>") != "");
  CHECK(xml_problem("<svg/><svg/>") != "");
  CHECK(xml_problem("<svg><text>1 < 2</text></svg>") != "");
}
