// The SFC-CA loop's share-out of tasks (core/src/task_stretches.hpp): each
// thread's stretch, and the last round's stealing.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "task_stretches.hpp"

using sfc::TaskStretches;

TEST_CASE("task stretches: contiguous, in thread order, covering every task, sizes within one") {
  for (std::int64_t tasks = 0; tasks <= 40; ++tasks)
    for (int team = 1; team <= 9; ++team) {
      CAPTURE(tasks);
      CAPTURE(team);
      std::int64_t expect = 0, smallest = tasks, largest = 0;
      for (int t = 0; t < team; ++t) {
        const auto [begin, end] = TaskStretches::stretch(tasks, t, team);
        CHECK(begin == expect);
        CHECK(end >= begin);
        smallest = std::min(smallest, end - begin);
        largest = std::max(largest, end - begin);
        expect = end;
      }
      CHECK(expect == tasks);
      CHECK(largest - smallest <= 1);
    }
  const TaskStretches room(4);
  CHECK(room.can_share(100, 2));
  CHECK(room.can_share(100, 4));
  CHECK_FALSE(room.can_share(100, 1));  // a team of one has nobody to share with
  CHECK_FALSE(room.can_share(100, 5));  // more threads than slots
  CHECK_FALSE(room.can_share(std::int64_t(1) << 32, 2));
}

// A team of std::threads, each running its stretch through next() as the
// loop's threads do. Thread 0 opens its stretch late and then waits until
// another thread has taken one of its tasks, so both the wait for an unopened
// stretch and the stealing itself run, whatever the scheduler does. Repeated,
// with the state closed between calls as the loop does, so that no call reads
// the last one's.
TEST_CASE("task stretches: every task runs exactly once when threads take the others' tasks") {
  constexpr int kTeam = 4;
  constexpr std::int64_t kTasks = 203;
  TaskStretches stretches(kTeam);
  for (int call = 0; call < 5; ++call) {
    CAPTURE(call);
    std::vector<std::atomic<int>> runs(kTasks);
    std::vector<int> runner(kTasks, -1);
    std::atomic<int> stolen_from_late{0};
    std::atomic<bool> timed_out{false};
    const auto late = TaskStretches::stretch(kTasks, 0, kTeam);
    stretches.close_all();
    const auto member = [&](int me) {
      const auto [begin, end] = TaskStretches::stretch(kTasks, me, kTeam);
      if (me == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      stretches.open(me, begin, end);
      if (me == 0) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (stolen_from_late.load() == 0 && !timed_out.load())
          if (std::chrono::steady_clock::now() > give_up) timed_out = true;
      }
      std::int64_t task = -1;
      while (stretches.next(me, kTeam, task)) {
        runs[std::size_t(task)].fetch_add(1);
        runner[std::size_t(task)] = me;
        if (me != 0 && task >= late.first && task < late.second) stolen_from_late.fetch_add(1);
      }
    };
    std::vector<std::thread> team;
    for (int me = 0; me < kTeam; ++me) team.emplace_back(member, me);
    for (std::thread& t : team) t.join();
    CHECK_FALSE(timed_out.load());
    int twice = 0, never = 0;
    for (auto& r : runs) {
      twice += r.load() > 1;
      never += r.load() == 0;
    }
    CHECK(twice == 0);
    CHECK(never == 0);
    CHECK(stolen_from_late.load() >= 1);
    // A stretch is taken front to back by its owner and back to front by the
    // others: the owner's tasks are a prefix of its stretch.
    for (int t = 0; t < kTeam; ++t) {
      const auto [begin, end] = TaskStretches::stretch(kTasks, t, kTeam);
      std::int64_t i = begin;
      while (i < end && runner[std::size_t(i)] == t) ++i;
      for (; i < end; ++i) CHECK(runner[std::size_t(i)] != t);
    }
  }
}
