// Cold inputs shared across the ColdOperands of one process: a smaller shape
// after a larger one fills nothing, the sets still stream the cold footprint,
// two live ColdOperands never share memory, and another input type is filled
// anew (these set SFC_COLD_BYTES: the streaming method); without it, on x86,
// one set evicted before each timed run. (No timing assertions: the counters
// are checked for bytes only.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"

namespace {

constexpr std::size_t kCold = std::size_t(4) << 20;

void small_cold_footprint() { setenv("SFC_COLD_BYTES", std::to_string(kCold).c_str(), 1); }

sfc::GemmPlan plan_of(sfc::GemmShape shape, sfc::DType dtype = sfc::DType::f32) {
  return sfc::GemmPlan(
      sfc::PlanRequest{.shape = shape, .dtype = dtype, .threads = 1, .layout = sfc::Layout::row_major});
}

// Every set's A and B are distinct memory, and the sets together stream the
// cold footprint or a flush precedes each rotation: each timed run reads cold inputs.
void check_cold(const sfc::ColdOperands& o, std::size_t a_bytes, std::size_t b_bytes) {
  CHECK(o.sets() >= 1);
  for (int i = 0; i + 1 < o.sets(); ++i) {
    const auto* a = static_cast<const unsigned char*>(o.a(i));
    const auto* b = static_cast<const unsigned char*>(o.b(i));
    CHECK(b >= a + a_bytes);
    CHECK(static_cast<const unsigned char*>(o.a(i + 1)) >= b + b_bytes);
  }
  CHECK((std::size_t(o.sets()) * (a_bytes + b_bytes) >= kCold || o.flush_bytes() >= kCold));
}

bool all_in_unit_interval(const float* values, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    if (!(values[i] >= -1.0f && values[i] < 1.0f)) return false;
  return true;
}

}  // namespace

TEST_CASE("timing: a smaller shape after a larger one reuses the cold inputs without filling them") {
  small_cold_footprint();
  sfc::GemmPlan large = plan_of({128, 128, 128});
  sfc::GemmPlan small = plan_of({32, 32, 32});
  const sfc::TimingCosts start = sfc::timing_costs();
  {
    sfc::ColdOperands first(large, sfc::Layout::row_major, 1000);
    check_cold(first, 128 * 128 * 4, 128 * 128 * 4);
    CHECK(first.time(large, 1, 2).reps == 2);
  }
  const sfc::TimingCosts after_first = sfc::timing_costs() - start;
  CHECK(after_first.filled_bytes > 0);
  CHECK(after_first.run_seconds > 0);
  {
    sfc::ColdOperands second(small, sfc::Layout::row_major, 1000);
    check_cold(second, 32 * 32 * 4, 32 * 32 * 4);
    CHECK(all_in_unit_interval(static_cast<const float*>(second.a(0)), 32 * 32));
    CHECK(all_in_unit_interval(static_cast<const float*>(second.b(second.sets() - 1)), 32 * 32));
    CHECK(second.time(small, 1, 2).reps == 2);
  }
  // The smaller shape's sets lie within what the larger one filled.
  CHECK((sfc::timing_costs() - start).filled_bytes == after_first.filled_bytes);
}

TEST_CASE("timing: a larger shape fills only what the smaller one before it did not") {
  small_cold_footprint();
  sfc::GemmPlan small = plan_of({32, 32, 32});
  sfc::GemmPlan large = plan_of({128, 128, 128});
  const sfc::TimingCosts start = sfc::timing_costs();
  std::int64_t small_bytes = 0;
  {
    const sfc::ColdOperands first(small, sfc::Layout::row_major, 10);
    small_bytes = (sfc::timing_costs() - start).filled_bytes;
  }
  const sfc::ColdOperands second(large, sfc::Layout::row_major, 1000);
  check_cold(second, 128 * 128 * 4, 128 * 128 * 4);
  CHECK(all_in_unit_interval(static_cast<const float*>(second.b(second.sets() - 1)), 128 * 128));
  CHECK(small_bytes > 0);
  CHECK((sfc::timing_costs() - start).filled_bytes > small_bytes);
}

TEST_CASE("timing: C rotates over as many sets as stream the cold footprint, not one per input set") {
  small_cold_footprint();
  sfc::GemmPlan thin = plan_of({512, 512, 8});  // A and B 16 KiB a set, C 1 MiB
  const sfc::ColdOperands o(thin, sfc::Layout::row_major, 1000);
  constexpr std::size_t c_bytes = 512 * 512 * 4;
  check_cold(o, 512 * 8 * 4, 8 * 512 * 4);
  CHECK(o.sets() > o.c_sets());
  CHECK(std::size_t(o.c_sets()) * c_bytes >= kCold);
  CHECK(o.c_sets() <= int(kCold / c_bytes) + 1);
  for (int i = 0; i + 1 < o.c_sets(); ++i)
    CHECK(static_cast<const unsigned char*>(o.c(i + 1)) >=
          static_cast<const unsigned char*>(o.c(i)) + c_bytes);
  CHECK(o.c(o.c_sets()) == o.c(0));
}

TEST_CASE("timing: two live cold operand sets never share memory") {
  small_cold_footprint();
  sfc::GemmPlan plan = plan_of({64, 64, 64});
  const sfc::ColdOperands first(plan, sfc::Layout::row_major, 100);
  const sfc::ColdOperands second(plan, sfc::Layout::row_major, 100);
  const auto* first_begin = static_cast<const unsigned char*>(first.a(0));
  const auto* first_end = static_cast<const unsigned char*>(first.b(first.sets() - 1)) + 64 * 64 * 4;
  const auto* second_a = static_cast<const unsigned char*>(second.a(0));
  CHECK((second_a >= first_end || second_a + 64 * 64 * 4 <= first_begin));
  CHECK(first.c(0) != second.c(0));
}

TEST_CASE("timing: cold inputs of another element type are filled anew") {
  small_cold_footprint();
  sfc::GemmPlan f64 = plan_of({64, 64, 64}, sfc::DType::f64);
  sfc::GemmPlan f32 = plan_of({64, 64, 64});
  std::optional<sfc::ColdOperands> first;
  first.emplace(f64, sfc::Layout::row_major, 100);
  first.reset();
  const sfc::TimingCosts start = sfc::timing_costs();
  const sfc::ColdOperands second(f32, sfc::Layout::row_major, 100);
  CHECK((sfc::timing_costs() - start).filled_bytes > 0);
  // An f64 bit pattern read as f32 would leave this interval.
  CHECK(all_in_unit_interval(static_cast<const float*>(second.a(0)), 64 * 64));
  CHECK(all_in_unit_interval(static_cast<const float*>(second.b(second.sets() - 1)), 64 * 64));
}

TEST_CASE("timing: an eviction precedes each timed run, never a warm-up or settling run") {
  std::vector<std::pair<char, int>> calls;  // ('r'un or 'e'vict, set)
  const std::function<void(int)> runners[] = {[&](int set) { calls.emplace_back('r', set); },
                                              [&](int set) { calls.emplace_back('r', set); }};
  const std::function<void(int)> evict = [&](int set) { calls.emplace_back('e', set); };
  REQUIRE(sfc::time_rounds(1, 3, 1, 0, runners, 0, nullptr, nullptr, 1, 1, evict).size() == 2);
  // Warm-up round; then per visit a settling run, then an eviction before each timed run.
  const std::vector<std::pair<char, int>> expected{
      {'r', 0}, {'r', 0},                                // warm-up
      {'r', 0}, {'e', 0}, {'r', 0}, {'e', 0}, {'r', 0},  // runner 0: settle, 2 timed
      {'r', 0}, {'e', 0}, {'r', 0}, {'e', 0}, {'r', 0},  // runner 1
      {'r', 0}, {'e', 0}, {'r', 0},                      // runner 0: settle, the last
      {'r', 0}, {'e', 0}, {'r', 0}};                     // runner 1
  CHECK(calls == expected);
  // One runner: no settling runs, still one eviction per timed run.
  calls.clear();
  CHECK(sfc::time_runs(2, 4, 1, 0, runners[0], 0, 1, evict).reps == 4);
  CHECK(std::count(calls.begin(), calls.end(), std::pair<char, int>{'e', 0}) == 4);
  CHECK(calls.size() == 2 + 4 + 4);
}

TEST_CASE("timing: without SFC_COLD_BYTES, x86 keeps one set and evicts it, whatever the L3 reads") {
  unsetenv("SFC_COLD_BYTES");
  sfc::GemmPlan plan = plan_of({96, 80, 64});
  const sfc::TimingCosts start = sfc::timing_costs();
  sfc::ColdOperands o(plan, sfc::Layout::row_major, 1000);
#if defined(__x86_64__) || defined(__i386__)
  CHECK(sfc::evicts_lines());
  CHECK(o.evicts());
  CHECK(o.sets() == 1);
  CHECK(o.c_sets() == 1);
  CHECK(o.flush_bytes() == 0);
  CHECK(o.eviction());
  // Only this one set is filled, not a cold footprint of sets (the shared
  // memory may hold earlier tests' values already: at most one set).
  CHECK((sfc::timing_costs() - start).filled_bytes <=
        std::int64_t((96 * 64 + 64 * 80 + 96 * 80) * 4 + 3 * 64));
  const sfc::TimingCosts before = sfc::timing_costs();
  CHECK(o.time(plan, 1, 3).reps == 3);
  const sfc::TimingCosts spent = sfc::timing_costs() - before;
  CHECK(spent.flush_seconds > 0);  // the evictions, counted as the flushes were
  CHECK(spent.run_seconds > 0);
  // SFC_COLD_BYTES asks for the streaming method back.
  setenv("SFC_COLD_BYTES", "0", 1);
  CHECK_FALSE(sfc::evicts_lines());
  unsetenv("SFC_COLD_BYTES");
#else
  CHECK_FALSE(o.evicts());
#endif
}
