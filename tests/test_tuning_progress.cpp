// The progress display's hook into the timing: time_rounds reports every run
// it makes, against the runs it plans, so the bar moves within a shape.
#include <doctest/doctest.h>

#include <functional>
#include <span>
#include <vector>

#include "sfc/measure.hpp"
#include "support.hpp"

TEST_CASE("timing: the run observer sees every run of time_rounds counted against the plan") {
  std::vector<sfc::RunProgress> seen;
  const sfc::RunObserver before =
      sfc::set_run_observer([&](const sfc::RunProgress& p) { seen.push_back(p); });
  CHECK_FALSE(before);  // none was set
  const std::function<void(int)> runners[] = {[](int) {}, [](int) {}, [](int) {}};
  const int warmup = 1, reps = 3;
  REQUIRE(sfc::time_rounds(warmup, reps, 2, 0, runners).size() == 3);
  const int planned = 3 * sfc::rounds_runs(warmup, reps, 3);
  REQUIRE(int(seen.size()) == planned);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].done == int(i) + 1);
    CHECK(seen[i].planned == planned);
  }
  // Taken away again: no more calls.
  CHECK(sfc::set_run_observer({}));
  REQUIRE(sfc::time_rounds(0, 1, 1, 0, std::span(runners, 1)).size() == 1);
  CHECK(int(seen.size()) == planned);
}

TEST_CASE("tune cli: the log says once that each shape first fills its cold inputs, and how much") {
  const sfc::test::TempDir dir("progress-note");
  const auto r = sfc::test::run_cli("tune --db " + dir.file("t.db") +
                                        " --grid 64 --k-layers 1 --k-block-factors 1 --reps 1 --warmup 0 "
                                        "--threads 1",
                                    "SFC_COLD_BYTES=4194304");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const auto note = r.output.find("each shape first fills its cold input sets (4 MiB, the cold footprint)");
  REQUIRE(note != std::string::npos);
  CHECK(r.output.find("each shape first fills", note + 1) == std::string::npos);
}
