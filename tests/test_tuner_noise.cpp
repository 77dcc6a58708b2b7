// The tuner's noise guard on synthetic runs and load averages.
#include <doctest/doctest.h>

#include <fstream>
#include <vector>

#include "sfc/noise_guard.hpp"
#include "sfc/records.hpp"
#include "sfc/tuning_session.hpp"
#include "support.hpp"

using sfc::test::TempDir;

namespace {

sfc::Timing runs(double mean, double stddev, int reps = 5) {
  return {.mean = mean, .min = mean - stddev, .stddev = stddev, .reps = reps};
}

}  // namespace

TEST_CASE("noise guard: steady runs on an idle machine pass, a wide spread or a busy machine does not") {
  const std::vector<sfc::Timing> steady = {runs(1.0, 0.01), runs(2.0, 0.1)};
  const sfc::NoiseVerdict calm = sfc::judge_noise(steady, 0.5, 0.7, 2);
  CHECK_FALSE(calm.noisy);
  CHECK_FALSE(calm.busy);
  CHECK(calm.load == doctest::Approx(0.7));

  const std::vector<sfc::Timing> spread = {runs(1.0, 0.01), runs(1.0, 0.4), runs(2.0, 0.9)};
  const sfc::NoiseVerdict wide = sfc::judge_noise(spread, 0.5, 0.5, 2);
  CHECK(wide.noisy);
  CHECK(wide.spread_configs == 2);
  CHECK(wide.worst_spread == doctest::Approx(0.45));
  CHECK(wide.describe().find("runs of 2 configurations spread up to 45%") != std::string::npos);

  // Busy: the load above the cores, before or after, whatever the spread.
  CHECK(sfc::judge_noise(steady, 3.5, 0.5, 2).busy);
  CHECK(sfc::judge_noise(steady, std::nullopt, 2.5, 2).busy);
  CHECK_FALSE(sfc::judge_noise(steady, std::nullopt, std::nullopt, 2).busy);
  // Fewer than kNoiseMinReps runs: their spread does not count.
  const std::vector<sfc::Timing> few = {runs(1.0, 0.9, sfc::kNoiseMinReps - 1)};
  CHECK_FALSE(sfc::judge_noise(few, 0.0, 0.0, 2).noisy);
  const std::vector<sfc::Timing> enough = {runs(1.0, 0.9, sfc::kNoiseMinReps)};
  CHECK(sfc::judge_noise(enough, 0.0, 0.0, 2).noisy);
}

TEST_CASE("noise guard: the load average is read from a loadavg file, nothing from a bad one") {
  TempDir dir("noise-load");
  {
    std::ofstream(dir.file("loadavg")) << "3.25 2.00 1.50 4/300 1234\n";
    std::ofstream(dir.file("garbage")) << "busy\n";
  }
  REQUIRE(sfc::read_load_average(dir.file("loadavg")));
  CHECK(*sfc::read_load_average(dir.file("loadavg")) == doctest::Approx(3.25));
  CHECK_FALSE(sfc::read_load_average(dir.file("garbage")));
  CHECK_FALSE(sfc::read_load_average(dir.file("absent")));
}

TEST_CASE("noise guard: a noisy shape is noted in the session summary, screening runs aside") {
  sfc::SessionSummary summary;
  sfc::Measurement steady;
  steady.reps = 5;
  steady.mean_s = 1.0;
  steady.min_s = 0.99;
  steady.stddev_s = 0.01;
  sfc::Measurement wide = steady;
  wide.min_s = 0.5;
  wide.stddev_s = 0.5;
  sfc::Measurement screened = wide;
  screened.screening = true;
  const std::vector<sfc::Measurement> quiet = {steady, screened};
  const sfc::NoiseVerdict calm = sfc::judge_shape_noise(quiet, 0.0, 1 << 20);
  CHECK_FALSE(calm.noisy);
  sfc::note_noise(summary, {64, 64, 64}, calm);
  CHECK(summary.noisy_shapes.empty());
  CHECK_FALSE(summary.busy);
  const std::vector<sfc::Measurement> loud = {steady, wide};
  const sfc::NoiseVerdict spread = sfc::judge_shape_noise(loud, 0.0, 1 << 20);
  CHECK(spread.noisy);
  sfc::note_noise(summary, {128, 64, 64}, spread);
  REQUIRE(summary.noisy_shapes.size() == 1);
  CHECK(summary.noisy_shapes[0].find("128x64x64: runs of 1 configuration spread up to 50%") == 0);
  sfc::note_noise(summary, {64, 64, 64}, sfc::judge_noise({}, 1e6, std::nullopt, 2));
  CHECK(summary.busy);
  CHECK(summary.peak_load == doctest::Approx(1e6));
  CHECK(summary.noisy_shapes.size() == 1);
}
