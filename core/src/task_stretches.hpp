// How the SFC-CA loop's tasks are shared out among the thread team.
//
// Each thread runs a contiguous stretch of the curve's tasks (a compact patch
// of C tiles), the same stretch every round, as a static schedule gives it:
// that keeps its C tiles and panels in its own caches and lets rounds follow
// one another without a barrier. A static schedule, though, makes the call as
// slow as its slowest thread, and a core slowed by something else (another
// guest on the host, an interrupt, a noisy neighbour on a many-core node)
// holds every other thread at the final barrier. So a thread whose stretch of
// a round is done takes that round's tasks from the back of the others'
// stretches, one at a time, until none is left, and then goes on to its own
// stretch of the next round. A later round adds to the tile an earlier one
// wrote, so a task is handed out for a round only once its earlier rounds are
// done (a byte per task counts them; a thread waits only where a thief is
// still finishing one) and an owner opens its stretch for a round only after
// taking its last task of the round before.
// Measured with a neighbour busy on one core, and level on a quiet machine:
// docs/experiments/2026-12-06-shared-tasks-zen5.md.
#pragma once
#include <immintrin.h>  // _mm_pause

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "sfc/error.hpp"

namespace sfc {

class TaskStretches {
 public:
  // Room for a team of up to `threads` and a loop of up to `tasks` tasks.
  // Throws sfc::Error beyond 2^28 - 1 tasks (a C of 4 TiB in 64 x 64 tiles).
  explicit TaskStretches(int threads = 1, std::int64_t tasks = 0)
      : size_(std::max(threads, 1)),
        tasks_(checked(tasks)),
        slots_(std::make_unique<Slot[]>(std::size_t(size_))),
        rounds_done_(std::make_unique<std::atomic<std::uint8_t>[]>(std::size_t(tasks_))) {}

  // Thread `thread`'s stretch of `tasks` on a team of `team`: [first, second).
  // The split libgomp's schedule(static) makes: the first tasks % team
  // threads take one task more.
  static std::pair<std::int64_t, std::int64_t> stretch(std::int64_t tasks, int thread, int team) {
    const std::int64_t q = tasks / team, r = tasks % team;
    const std::int64_t begin = thread * q + std::min<std::int64_t>(thread, r);
    return {begin, begin + q + (thread < r ? 1 : 0)};
  }

  // Before the team starts (one thread): every stretch closed, so that a thief
  // waits for the owner to open it rather than read the last call's state.
  void close_all() {
    for (int t = 0; t < size_; ++t) slots_[t].range.store(kClosed, std::memory_order_relaxed);
  }

  // The owner, at the start of each round, after taking its last task of the
  // round before. Round 0 also clears its tasks' round counts from the last
  // call; whoever reads them took a task from this stretch after this release.
  void open(int thread, int round, std::int64_t begin, std::int64_t end) {
    assert(thread < size_ && end <= tasks_ && round < 255);
    if (round == 0)
      for (std::int64_t t = begin; t < end; ++t) rounds_done_[t].store(0, std::memory_order_relaxed);
    slots_[thread].range.store(pack(round, begin, end), std::memory_order_release);
  }

  // The next task of `round` for `thread` of a team of `team`: its own
  // stretch front to back, then the others' from their backs. False when
  // every stretch's tasks of the round are taken. Returns a task only once its
  // earlier rounds are done (a thief may still be finishing one). Waits while
  // another thread has not yet opened its stretch for the round: it is
  // finishing a task of the round before (or has not started), and this
  // thread would only wait for it at the barrier that follows the loop or at
  // that task. The waits spin a little, then yield the core, which the late
  // thread may be waiting for where threads outnumber cores.
  bool next(int thread, int team, int round, std::int64_t& task) {
    if (!take(slots_[thread], round, /*front=*/true, task)) {
      bool found = false;
      for (int spins = 0; !found; ++spins) {
        bool late = false;
        for (int i = 1; i < team && !found; ++i) {
          Slot& victim = slots_[(thread + i) % team];
          const std::uint64_t v = victim.range.load(std::memory_order_acquire);
          if (v == kClosed || int(v >> 56) < round)
            late = true;
          else
            found = take(victim, round, /*front=*/false, task);
        }
        if (!found && !late) return false;
        if (!found) pause(spins);
      }
    }
    if (round > 0)
      for (int spins = 0; rounds_done_[task].load(std::memory_order_acquire) < round; ++spins) pause(spins);
    return true;
  }

  // `task`'s `round` is done: its tile may pass to another thread.
  void done(std::int64_t task, int round) {
    rounds_done_[task].store(std::uint8_t(round + 1), std::memory_order_release);
  }

 private:
  // A stretch's remaining tasks of one round, [front, back), in one word --
  // round in the top 8 bits, then front and back in 28 bits each -- so that an
  // owner and a thief can both move it with one CAS.
  static constexpr std::int64_t kMaxTasks = std::int64_t(1) << 28;
  static constexpr std::uint64_t kClosed = std::numeric_limits<std::uint64_t>::max();
  static constexpr std::uint64_t kMask = std::uint64_t(kMaxTasks) - 1;
  static std::uint64_t pack(int round, std::int64_t front, std::int64_t back) {
    return std::uint64_t(round) << 56 | std::uint64_t(front) << 28 | std::uint64_t(back);
  }

  static std::int64_t checked(std::int64_t tasks) {
    if (tasks >= kMaxTasks)
      throw Error("the SFC-CA loop would have " + std::to_string(tasks) +
                  " tasks (C tiles times K_layers); at most " + std::to_string(kMaxTasks - 1) +
                  " can run: larger blocks or a smaller call");
    return std::max<std::int64_t>(tasks, 0);
  }

  static constexpr int kSpins = 1000;  // pauses before yielding: some microseconds
  static void pause(int spins) {
    if (spins < kSpins)
      _mm_pause();
    else
      std::this_thread::yield();
  }

  struct alignas(64) Slot {  // one cache line each: the owners' CASes do not collide
    std::atomic<std::uint64_t> range{kClosed};
  };

  static bool take(Slot& slot, int round, bool front, std::int64_t& task) {
    std::uint64_t v = slot.range.load(std::memory_order_acquire);
    for (;;) {
      if (v == kClosed || int(v >> 56) != round) return false;
      const std::int64_t f = std::int64_t(v >> 28 & kMask), b = std::int64_t(v & kMask);
      if (f >= b) return false;
      const std::uint64_t taken = front ? pack(round, f + 1, b) : pack(round, f, b - 1);
      if (slot.range.compare_exchange_weak(v, taken, std::memory_order_acq_rel, std::memory_order_acquire)) {
        task = front ? f : b - 1;
        return true;
      }
    }
  }

  int size_;
  std::int64_t tasks_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> rounds_done_;  // per task: its rounds done this call
};

}  // namespace sfc
