// The SFC-CA loop's share-out of tasks (core/src/task_stretches.hpp): each
// thread's stretch, and the taking of the others' tasks round by round.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "sfc/error.hpp"
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
  // Past 2^28 - 1 tasks the loop refuses, before allocating anything.
  CHECK_THROWS_AS(TaskStretches(2, std::int64_t(1) << 28), sfc::Error);
  CHECK_NOTHROW(TaskStretches(2, 1000));
}

// A team of std::threads runs three rounds of tasks through open() and next()
// as the loop's threads do. Thread 0 opens its first round late and then
// waits until another thread has taken one of its tasks, so both the wait for
// an unopened stretch and the stealing run whatever the scheduler does; thread
// 1 is slow in the second round, so its tasks pass to others there. Every task
// must run once per round, never before its earlier rounds are done (each
// run checks the rounds its task has finished), and the owner of a stretch
// takes it front to back, the others back to front. Repeated, with the state
// closed between calls as the loop does, so that no call reads the last one's.
TEST_CASE(
    "task stretches: every task runs once a round, after its earlier rounds, when threads take the others'") {
  constexpr int kTeam = 4, kRounds = 3;
  constexpr std::int64_t kTasks = 203;
  TaskStretches stretches(kTeam, kTasks);
  for (int call = 0; call < 5; ++call) {
    CAPTURE(call);
    std::vector<std::atomic<int>> runs(kTasks * kRounds), finished(kTasks);
    std::vector<int> runner(kTasks * kRounds, -1);
    std::atomic<int> early{0}, stolen_from_late{0};
    std::atomic<bool> timed_out{false};
    const auto late = TaskStretches::stretch(kTasks, 0, kTeam);
    stretches.close_all();
    const auto member = [&](int me) {
      const auto [begin, end] = TaskStretches::stretch(kTasks, me, kTeam);
      for (int round = 0; round < kRounds; ++round) {
        if (me == 0 && round == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stretches.open(me, round, begin, end);
        if (me == 0 && round == 0) {
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
          while (stolen_from_late.load() == 0 && !timed_out.load())
            if (std::chrono::steady_clock::now() > give_up) timed_out = true;
        }
        for (std::int64_t task = 0; stretches.next(me, kTeam, round, task); stretches.done(task, round)) {
          const std::size_t at = std::size_t(round * kTasks + task);
          if (finished[std::size_t(task)].load() != round) early.fetch_add(1);
          runs[at].fetch_add(1);
          runner[at] = me;
          if (me != 0 && round == 0 && task >= late.first && task < late.second)
            stolen_from_late.fetch_add(1);
          if (me == 1 && round == 1) std::this_thread::sleep_for(std::chrono::microseconds(200));
          finished[std::size_t(task)].store(round + 1);
        }
      }
    };
    std::vector<std::thread> team;
    for (int me = 0; me < kTeam; ++me) team.emplace_back(member, me);
    for (std::thread& t : team) t.join();
    CHECK_FALSE(timed_out.load());
    CHECK(early.load() == 0);
    int twice = 0, never = 0;
    for (auto& r : runs) {
      twice += r.load() > 1;
      never += r.load() == 0;
    }
    CHECK(twice == 0);
    CHECK(never == 0);
    CHECK(stolen_from_late.load() >= 1);
    for (int round = 0; round < kRounds; ++round)
      for (int t = 0; t < kTeam; ++t) {
        const auto [begin, end] = TaskStretches::stretch(kTasks, t, kTeam);
        std::int64_t i = begin;
        while (i < end && runner[std::size_t(round * kTasks + i)] == t) ++i;
        for (; i < end; ++i) CHECK(runner[std::size_t(round * kTasks + i)] != t);
      }
  }
}
