// The figures a benchmark is judged by: WHM, ratios to the peers, per shape.
#include <doctest/doctest.h>

#include "sfc/bench_summary.hpp"
#include "sfc/roofline.hpp"
#include "test_bench_support.hpp"

using sfc::test::two_shape_result;

TEST_CASE("bench: the weighted harmonic mean is total flops over total time") {
  CHECK(sfc::weighted_harmonic_mean_gflops({2e9, 6e9}, {1.0, 3.0}) == doctest::Approx(2.0));
  // Not the mean of the rates (1 and 0.11 GFLOP/s average 0.56): the slow
  // shape's time dominates, as it would for a user running both.
  CHECK(sfc::weighted_harmonic_mean_gflops({1e9, 1e9}, {1.0, 9.0}) == doctest::Approx(0.2));
  CHECK_THROWS_AS(sfc::weighted_harmonic_mean_gflops({1e9}, {1.0, 2.0}), sfc::Error);
  CHECK_THROWS_AS(sfc::weighted_harmonic_mean_gflops({}, {}), sfc::Error);
  CHECK_THROWS_AS(sfc::weighted_harmonic_mean_gflops({1e9}, {0.0}), sfc::Error);
}

TEST_CASE("bench: summary ratios to each peer, the best peer and per shape") {
  const sfc::BenchSummary s = sfc::summarize(two_shape_result());
  const double flops = 2.0 * 64 * 64 * 64 + 2.0 * 128 * 128 * 128;
  REQUIRE(s.whm_gflops.size() == 3);
  CHECK(s.whm_gflops[0] == doctest::Approx(flops / 5e-5 / 1e9));
  CHECK(s.whm_gflops[1] == doctest::Approx(flops / 6e-5 / 1e9));
  CHECK(s.whm_gflops[2] == doctest::Approx(flops / 8.5e-5 / 1e9));
  CHECK(s.ratio_vs[0] == doctest::Approx(1.0));
  CHECK(s.ratio_vs[1] == doctest::Approx(6.0 / 5.0));
  CHECK(s.ratio_vs[2] == doctest::Approx(8.5 / 5.0));
  // "a" has the best WHM although "b" wins the small shape.
  REQUIRE(s.best_peer.has_value());
  CHECK(*s.best_peer == 1);
  CHECK(*s.ratio_vs_best_peer == doctest::Approx(1.2));
  // Per shape, against the fastest peer on that shape: b on the small one
  // (twice our rate), a on the large one (equal).
  REQUIRE(s.shape_ratio_vs_best_peer.size() == 2);
  CHECK(*s.shape_ratio_vs_best_peer[0] == doctest::Approx(0.5));
  CHECK(*s.shape_ratio_vs_best_peer[1] == doctest::Approx(1.0));
  CHECK(*s.min_shape_ratio == doctest::Approx(0.5));
}

TEST_CASE("bench: the result's statistic decides which time of a timing counts") {
  sfc::BenchResult r = two_shape_result();
  // SFC-CA's small shape: fastest run 1e-5, but one slow run lifts its mean to 3e-5.
  r.shapes[0].timings[0].mean = 3e-5;
  const double flops = 2.0 * 64 * 64 * 64 + 2.0 * 128 * 128 * 128;
  r.statistic = sfc::Statistic::min;
  CHECK(sfc::summarize(r).whm_gflops[0] == doctest::Approx(flops / 5e-5 / 1e9));
  CHECK(*sfc::summarize(r).shape_ratio_vs_best_peer[0] == doctest::Approx(0.5));
  r.statistic = sfc::Statistic::mean;
  CHECK(sfc::summarize(r).whm_gflops[0] == doctest::Approx(flops / 7e-5 / 1e9));
  CHECK(*sfc::summarize(r).shape_ratio_vs_best_peer[0] == doctest::Approx(0.5 / 3));
}

TEST_CASE("bench: without peers there is nothing to compare") {
  sfc::BenchResult r = two_shape_result();
  r.implementations.resize(1);
  for (auto& shape : r.shapes) shape.timings.resize(1);
  const sfc::BenchSummary s = sfc::summarize(r);
  CHECK(s.whm_gflops.size() == 1);
  CHECK_FALSE(s.best_peer.has_value());
  CHECK_FALSE(s.ratio_vs_best_peer.has_value());
  CHECK_FALSE(s.min_shape_ratio.has_value());
  CHECK_FALSE(s.shape_ratio_vs_best_peer[0].has_value());
}

TEST_CASE("bench: the ratio to the best peer is also given pass by pass") {
  sfc::BenchResult r = two_shape_result();
  const auto timing_of = sfc::test::timing_of;
  // Pass 0 as pooled; in pass 1 SFC-CA ran the large shape twice as slow.
  r.shapes[0].passes = {r.shapes[0].timings, r.shapes[0].timings};
  r.shapes[1].passes = {r.shapes[1].timings, {timing_of(8e-5), timing_of(4e-5), timing_of(8e-5)}};
  sfc::BenchSummary s = sfc::summarize(r);
  REQUIRE(s.pass_ratios_vs_best_peer.size() == 2);
  CHECK(s.pass_ratios_vs_best_peer[0] == doctest::Approx(1.2));        // 6e-5 / 5e-5 against "a"
  CHECK(s.pass_ratios_vs_best_peer[1] == doctest::Approx(6.0 / 9.0));  // 6e-5 / 9e-5
  // Shapes timed in different numbers of passes have no pass-by-pass figure.
  r.shapes[1].passes.pop_back();
  CHECK(sfc::summarize(r).pass_ratios_vs_best_peer.empty());
  // Nor does a run without peers.
  r.shapes[1].passes.push_back(r.shapes[1].passes[0]);
  r.implementations.resize(1);
  for (auto& shape : r.shapes) {
    shape.timings.resize(1);
    for (auto& pass : shape.passes) pass.resize(1);
  }
  CHECK(sfc::summarize(r).pass_ratios_vs_best_peer.empty());
}

TEST_CASE("bench: roofline is the lower of compute and bandwidth times intensity") {
  // 1024^3 fp32: 2 GFLOP over 12 MiB -> 170.7 flop/byte.
  const sfc::GemmShape cube{1024, 1024, 1024};
  CHECK(sfc::arithmetic_intensity(cube, sfc::DType::f32) == doctest::Approx(2.0 * 1024 / 12));
  CHECK(sfc::arithmetic_intensity(cube, sfc::DType::f64) == doctest::Approx(2.0 * 1024 / 24));
  const auto roofline = sfc::Roofline::from_calibration(
      {.gamma_gflops_per_core = 100, .beta_gbytes_per_s = 10}, sfc::DType::f32, 2, "test");
  CHECK(roofline.bound_gflops(cube, sfc::DType::f32) == doctest::Approx(200));  // compute bound
  const sfc::GemmShape skinny{1024, 1024, 4};                                   // intensity ~ 2
  CHECK(roofline.bound_gflops(skinny, sfc::DType::f32) ==
        doctest::Approx(10 * sfc::arithmetic_intensity(skinny, sfc::DType::f32)));
  // f64 does half the flops per instruction, bf16 twice.
  CHECK(sfc::Roofline::from_calibration({100, 10}, sfc::DType::f64, 1, "").gflops_per_core == 50);
  CHECK(sfc::Roofline::from_calibration({100, 10}, sfc::DType::bf16, 1, "").gflops_per_core == 200);
}
