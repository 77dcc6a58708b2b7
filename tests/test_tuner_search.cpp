// Tuner on tiny shapes with the real engine: clamped duplicates, resume from
// prior measurements, pruning, and the stop flag. (No timing assertions.)
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/measure.hpp"
#include "sfc/tuner.hpp"

namespace {

// Small inputs, no 1 GiB cache flush: these tests check logic, not speed.
sfc::TuneOptions tiny_options(double prune_margin = -1) {
  setenv("SFC_COLD_BYTES", "1048576", 1);
  return {.dtype = sfc::DType::f32, .threads = 2, .warmup = 0, .reps = 1, .prune_margin = prune_margin};
}

const sfc::GemmShape kShape{64, 96, 128};

}  // namespace

TEST_CASE("tuner: every configuration is recorded, clamped ones share one timing") {
  const sfc::Tuner tuner(tiny_options());
  const sfc::ShapeTuning t = tuner.tune(kShape, sfc::ConfigSet::all());
  REQUIRE(t.measurements.size() == 64);
  CHECK_FALSE(t.interrupted);
  CHECK(t.result.k_layers >= 1);
  CHECK(t.result.k_block_factor >= 1);
  for (float seconds : t.result.seconds) CHECK(seconds > 0);

  std::set<std::pair<int, int>> effective;
  for (const sfc::Measurement& m : t.measurements) {
    CHECK(m.threads == 2);
    CHECK(m.reps == 1);
    CHECK_FALSE(m.screening);
    CHECK(m.effective_k_layers <= m.k_layers);
    CHECK(m.effective_k_block_factor <= m.k_block_factor);
    CHECK(m.blocks.bk > 0);
    effective.emplace(m.effective_k_layers, m.effective_k_block_factor);
  }
  // K = 128 has only a few K blocks, so most requests clamp onto a few plans,
  // and requests sharing a plan carry the same time.
  CHECK(effective.size() < 64);
  for (const sfc::Measurement& a : t.measurements)
    for (const sfc::Measurement& b : t.measurements)
      if (a.effective_k_layers == b.effective_k_layers &&
          a.effective_k_block_factor == b.effective_k_block_factor)
        CHECK(a.mean_s == b.mean_s);
  // The winner is the fastest (ties to the smallest configuration).
  const float best = t.result.seconds[sfc::config_index(t.result.k_layers, t.result.k_block_factor)];
  for (float seconds : t.result.seconds) CHECK(best <= seconds);
}

TEST_CASE("tuner: plans that do not fit the round workspace together are timed in groups") {
  sfc::TuneOptions options = tiny_options();
  options.round_workspace_bytes = 1;  // one plan a group: one configuration after the other
  const sfc::ShapeTuning t = sfc::Tuner(options).tune(kShape, sfc::ConfigSet::all());
  REQUIRE(t.measurements.size() == 64);
  CHECK_FALSE(t.interrupted);
  for (const sfc::Measurement& a : t.measurements) {
    CHECK(a.reps == 1);
    for (const sfc::Measurement& b : t.measurements)  // clamped requests still share one timing
      if (a.effective_k_layers == b.effective_k_layers &&
          a.effective_k_block_factor == b.effective_k_block_factor)
        CHECK(a.mean_s == b.mean_s);
  }
  for (float seconds : t.result.seconds) CHECK(seconds > 0);
}

TEST_CASE("tuner: confirmation times the leaders again and keeps the fastest run of both") {
  sfc::TuneOptions options = tiny_options();
  options.confirm = 3;
  // Every configuration within the margin, however the machine ran them: with
  // one run each, a 2-thread run of this tiny shape whose second thread
  // waited for a core (a loaded machine: one timeslice, milliseconds) is
  // hundreds of times the fastest, and a margin of 100 then left the fastest
  // alone, unconfirmed (64 measurements, not 67: 2 of 450 runs, three at a
  // time beside a build).
  options.confirm_margin = 1e12;
  const sfc::ShapeTuning t = sfc::Tuner(options).tune(kShape, sfc::ConfigSet::all());
  REQUIRE(t.measurements.size() == 64 + 3);
  CHECK_FALSE(t.interrupted);
  for (std::size_t i = 64; i < t.measurements.size(); ++i) {
    const sfc::Measurement& again = t.measurements[i];
    CHECK_FALSE(again.screening);
    const int index = sfc::config_index(again.k_layers, again.k_block_factor);
    double fastest = again.min_s;
    for (std::size_t j = 0; j < 64; ++j)
      if (sfc::config_index(t.measurements[j].k_layers, t.measurements[j].k_block_factor) == index)
        fastest = std::fmin(fastest, t.measurements[j].min_s);
    CHECK(t.result.seconds[index] == static_cast<float>(fastest));
  }
  const float best = t.result.seconds[sfc::config_index(t.result.k_layers, t.result.k_block_factor)];
  for (float seconds : t.result.seconds) CHECK(best <= seconds);

  options.confirm_margin = 0;  // only ties with the best: often none, never more than asked
  const sfc::ShapeTuning none = sfc::Tuner(options).tune(kShape, sfc::ConfigSet::all());
  CHECK(none.measurements.size() <= 64 + 3);
}

TEST_CASE("tuner: prior measurements are not taken again") {
  const sfc::Tuner tuner(tiny_options());
  const sfc::ConfigSet half = sfc::ConfigSet::parse("1:4", "1:8");
  const sfc::ShapeTuning first = tuner.tune(kShape, half);
  CHECK(first.measurements.size() == 32);
  CHECK(tuner.has_work(sfc::ConfigSet::all(), first.measurements));
  CHECK_FALSE(tuner.has_work(half, first.measurements));
  CHECK(tuner.tune(kShape, half, first.measurements).measurements.empty());
  const sfc::ShapeTuning rest = tuner.tune(kShape, sfc::ConfigSet::all(), first.measurements);
  CHECK(rest.measurements.size() == 32);
  for (const sfc::Measurement& m : rest.measurements) CHECK(m.k_layers > 4);
  CHECK(std::isnan(rest.result.seconds[sfc::config_index(1, 1)]));  // this call did not time it
}

TEST_CASE("tuner: pruning screens everything and fully times only the close ones") {
  const sfc::Tuner tuner(tiny_options(0.0));  // margin 0: only the best screen survives
  const sfc::ShapeTuning t = tuner.tune(kShape, sfc::ConfigSet::all());
  int screens = 0, full = 0;
  for (const sfc::Measurement& m : t.measurements) {
    (m.screening ? screens : full) += 1;
    // A short shape's screen is the fastest of several runs (one run is
    // often twice too slow), at most 5, even with reps = 1 for the full ones.
    if (m.screening) CHECK(m.reps >= 2);
    CHECK(m.reps <= 5);
  }
  CHECK(screens == 64);
  CHECK(full >= 1);  // the best one (and any that clamp to the same plan)
  CHECK(full < 64);
  CHECK(t.result.k_layers >= 1);
  CHECK_FALSE(tuner.has_work(sfc::ConfigSet::all(), t.measurements));
  // Without pruning the same store still lacks full measurements.
  CHECK(sfc::Tuner(tiny_options()).has_work(sfc::ConfigSet::all(), t.measurements));
}

TEST_CASE("tuner: the stop flag ends the search before the next run, keeping what was recorded") {
  // Configurations are timed in rounds, so they finish together: stopping
  // once the screen is recorded ends the search before the full timing.
  const sfc::Tuner tuner(tiny_options(0.25));
  std::atomic<bool> stop{false};
  int steps = 0;
  const sfc::ShapeTuning t =
      tuner.tune(kShape, sfc::ConfigSet::all(), {}, &stop, [&](const sfc::TuneStep& step) {
        ++steps;
        CHECK(step.screening);
        CHECK(step.total == 64);
        if (step.done == 64) stop = true;
      });
  CHECK(t.interrupted);
  CHECK(t.measurements.size() == 64);
  CHECK(steps == 64);
  for (const sfc::Measurement& m : t.measurements) CHECK(m.screening);
  CHECK(t.result.k_layers == 0);  // no full measurement, no winner

  stop = true;  // set before anything ran: nothing is timed
  const sfc::ShapeTuning none = tuner.tune(kShape, sfc::ConfigSet::all(), {}, &stop);
  CHECK(none.interrupted);
  CHECK(none.measurements.empty());
}

TEST_CASE("tuner: bad options are refused") {
  CHECK_THROWS_AS(sfc::Tuner({.reps = 0}), sfc::Error);
  CHECK_THROWS_AS(sfc::Tuner({.warmup = -1}), sfc::Error);
  CHECK_THROWS_AS(sfc::Tuner({.threads = -2}), sfc::Error);
}

TEST_CASE("tuner: the layout option times gemm() on plain matrices and records that layout") {
  sfc::TuneOptions options = tiny_options();
  options.layout = sfc::Layout::row_major;
  const sfc::ShapeTuning t = sfc::Tuner(options).tune(kShape, sfc::ConfigSet::parse("1,2", "1"));
  REQUIRE(t.measurements.size() == 2);
  for (const sfc::Measurement& m : t.measurements) CHECK(m.layout == sfc::Layout::row_major);
  CHECK(t.result.layout == sfc::Layout::row_major);
  CHECK(t.result.k_layers >= 1);
  CHECK(sfc::Tuner(tiny_options()).tune(kShape, sfc::ConfigSet::parse("1", "1")).measurements[0].layout ==
        sfc::Layout::blocked);
}

TEST_CASE("timing: pooling two timings gives the statistics of all their runs") {
  // Runs {1, 2, 3} and {4, 6}: min 1, mean 3.2, sample variance (4.84 + 1.44 + 0.04 + 0.64 + 7.84) / 4 = 3.7.
  const sfc::Timing a{.mean = 2, .min = 1, .stddev = 1, .reps = 3};
  const sfc::Timing b{.mean = 5, .min = 4, .stddev = std::sqrt(2.0), .reps = 2};
  const sfc::Timing t = sfc::pooled(a, b);
  CHECK(t.reps == 5);
  CHECK(t.min == 1);
  CHECK(t.mean == doctest::Approx(3.2));
  CHECK(t.stddev == doctest::Approx(std::sqrt(3.7)));
  CHECK(sfc::pooled(sfc::Timing{}, b).mean == 5);
  CHECK(sfc::pooled(a, sfc::Timing{}).reps == 3);
}

TEST_CASE("timing: a time budget stops the runs early, never below one timed run") {
  // Each run sleeps 20 ms: a 50 ms budget allows 3 timed runs (a loaded
  // machine's longer sleeps only make it fewer), and no budget all 100.
  int runs = 0;
  const auto nap = [&](int) {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  const sfc::Timing budgeted = sfc::time_runs(2, 100, 1, 0, nap, 0.05);
  CHECK(budgeted.reps >= 1);
  CHECK(budgeted.reps <= 3);
  CHECK(runs <= 2 + 3);
  CHECK(budgeted.min >= 0.019);
  runs = 0;
  const sfc::Timing tiny = sfc::time_runs(0, 100, 1, 0, nap, 1e-9);  // a budget below one run: one run
  CHECK(tiny.reps == 1);
  CHECK(runs == 1);
  CHECK(sfc::time_runs(0, 5, 1, 0, [](int) {}).reps == 5);  // no budget: every run
}

TEST_CASE("timing: rounds visit every runner once per round, each within its own budget") {
  std::vector<std::pair<int, int>> calls;  // (runner, set)
  const std::function<void(int)> runners[] = {[&](int set) { calls.emplace_back(0, set); },
                                              [&](int set) { calls.emplace_back(1, set); }};
  const std::vector<sfc::Timing> t = sfc::time_rounds(1, 3, 3, 0, runners);
  REQUIRE(t.size() == 2);
  CHECK(t[0].reps == 3);
  CHECK(t[1].reps == 3);
  // One warm-up round, then timed rounds, alternating; a visit settles with an
  // untimed run before its timed ones (two, then the one left); the sets rotate
  // across runners and runs.
  const std::vector<std::pair<int, int>> expected{{0, 0}, {1, 1},                   // warm-up
                                                  {0, 2}, {0, 0}, {0, 1},           // settle, 2 timed
                                                  {1, 2}, {1, 0}, {1, 1},           //
                                                  {0, 2}, {0, 0}, {1, 1}, {1, 2}};  // settle, the last
  CHECK(calls == expected);
  CHECK(calls.size() == std::size_t(2 * sfc::rounds_runs(1, 3, 2)));
  // One runner alone follows itself: no settling runs.
  calls.clear();
  REQUIRE(sfc::time_rounds(1, 3, 3, 0, std::span(runners, 1)).size() == 1);
  CHECK(calls.size() == std::size_t(sfc::rounds_runs(1, 3, 1)));
  CHECK(calls.size() == 4);

  // A rotation position carried over: the next call goes on from it.
  calls.clear();
  int next = 2;
  REQUIRE(sfc::time_rounds(0, 1, 3, 0, runners, 0, nullptr, &next).size() == 2);
  CHECK(next == 0);
  REQUIRE(sfc::time_rounds(0, 1, 3, 0, runners, 0, nullptr, &next).size() == 2);
  const std::vector<std::pair<int, int>> carried{{0, 2}, {0, 0}, {1, 1}, {1, 2},
                                                 {0, 0}, {0, 1}, {1, 2}, {1, 0}};
  CHECK(calls == carried);
  CHECK(next == 1);

  // A slow runner leaves the rounds when its budget is spent; a fast one
  // takes every run (it would need 150 ms of preemption in 5 empty runs to miss).
  const std::function<void(int)> uneven[] = {
      [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }, [](int) {}};
  const std::vector<sfc::Timing> u = sfc::time_rounds(0, 5, 1, 0, uneven, 0.15);
  REQUIRE(u.size() == 2);
  CHECK(u[0].reps >= 1);
  CHECK(u[0].reps <= 2);
  CHECK(u[1].reps == 5);
  // ... unless it has not made its min_reps runs: a budget spent by one run
  // (a slow one, say) still gets the second, and no more.
  int slow_runs = 0;
  const std::function<void(int)> one_slow[] = {[&](int) {
    ++slow_runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }};
  const std::vector<sfc::Timing> s = sfc::time_rounds(0, 5, 1, 0, one_slow, 1e-9, nullptr, nullptr, 2);
  REQUIRE(s.size() == 1);
  CHECK(s[0].reps == 2);
  CHECK(slow_runs == 2);
  CHECK_THROWS_AS(sfc::time_rounds(0, 5, 1, 0, one_slow, 0, nullptr, nullptr, 6), sfc::Error);
  CHECK_THROWS_AS(sfc::time_rounds(0, 5, 1, 0, one_slow, 0, nullptr, nullptr, 0), sfc::Error);

  // The stop flag is read before every run: nothing comes back once it is set.
  std::atomic<bool> stop{false};
  int runs = 0;
  const std::function<void(int)> stopping[] = {[&](int) { ++runs; },
                                               [&](int) {
                                                 ++runs;
                                                 stop = true;
                                               }};
  CHECK(sfc::time_rounds(0, 10, 1, 0, stopping, 0, &stop).empty());
  CHECK(runs == 1 + sfc::kTimedPerVisit + 1);  // runner 0's visit, runner 1's settling run
  CHECK_THROWS_AS(sfc::time_rounds(0, 0, 1, 0, stopping), sfc::Error);
  CHECK_THROWS_AS(sfc::time_rounds(0, 1, 0, 0, stopping), sfc::Error);
}

TEST_CASE("tuner: with a budget every configuration is still measured, with the runs it took") {
  sfc::TuneOptions options = tiny_options();
  options.reps = 1000;
  options.budget_seconds = 1e-9;  // one timed run each
  const sfc::Tuner tuner(options);
  const sfc::ShapeTuning t = tuner.tune(kShape, sfc::ConfigSet::parse("1,2", "1"));
  REQUIRE(t.measurements.size() == 2);
  for (const sfc::Measurement& m : t.measurements) CHECK(m.reps == 1);
  options.budget_seconds = -1;
  CHECK_THROWS_AS(sfc::Tuner{options}, sfc::Error);
}
