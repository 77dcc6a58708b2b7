// How the SFC-CA loop's tasks are shared out among the thread team.
//
// Each thread runs a contiguous stretch of the curve's tasks (a compact patch
// of C tiles), the same stretch every round, as a static schedule gives it:
// that keeps its C tiles and panels in its own caches and lets rounds follow
// one another without a barrier. A static schedule, though, makes the call as
// slow as its slowest thread, and a core slowed by something else (another
// guest on the host, an interrupt, a noisy neighbour on a many-core node)
// holds every other thread at the final barrier. So in the last round a
// thread whose stretch is done takes tasks from the back of the others'
// stretches, one at a time, until none is left. Only the last round is
// shared: a task's earlier rounds must be done before a later one adds to its
// tile, and the owner of a stretch opens it for the last round only after
// finishing its earlier rounds (the release that the thief's acquire pairs
// with).
//
// Measured on the 2-core Zen 5 guest (2 threads, row-major fp32 (1,1),
// `sfc-tune gemm M N K --layout row --threads 2 --reps 40`, mean, static
// schedule -> last round shared, alternated twice): with a neighbour taking a
// quarter of the second core (busy 1 ms in every 4), 1024^3 6.46, 6.41 ->
// 5.70, 5.73 ms, 2048x2048x512 12.35, 12.13 -> 10.95, 11.09, 4096x1024x1024
// 23.93, 23.66 -> 22.06, 21.12, 256x256x2048 0.99, 1.07 -> 0.95, 1.00; with
// it taking the whole core, 2048x2048x512 17.2-17.8 -> 11.8-11.9 ms (min); on
// the quiet machine level (within 1.5%; 512x512x16384, 64 tiles, 1.2%
// behind over five alternations).
#pragma once
#include <immintrin.h>  // _mm_pause

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>
#include <utility>

namespace sfc {

class TaskStretches {
 public:
  // Room for a team of up to `threads`.
  explicit TaskStretches(int threads = 1)
      : size_(threads > 0 ? threads : 1), slots_(std::make_unique<Slot[]>(std::size_t(size_))) {}

  // Thread `thread`'s stretch of `tasks` on a team of `team`: [first, second).
  // The split libgomp's schedule(static) makes: the first tasks % team
  // threads take one task more.
  static std::pair<std::int64_t, std::int64_t> stretch(std::int64_t tasks, int thread, int team) {
    const std::int64_t q = tasks / team, r = tasks % team;
    const std::int64_t begin = thread * q + std::min<std::int64_t>(thread, r);
    return {begin, begin + q + (thread < r ? 1 : 0)};
  }

  // Whether a call of `tasks` on `team` threads can share its last round
  // (task indices are kept in 32 bits; a team fits the slots).
  bool can_share(std::int64_t tasks, int team) const {
    return team > 1 && team <= size_ && tasks < std::int64_t(std::numeric_limits<std::uint32_t>::max());
  }

  // Before the team starts (one thread): every stretch closed, so that a thief
  // waits for the owner to open it rather than read the last call's state.
  void close_all() {
    for (int t = 0; t < size_; ++t) slots_[t].range.store(kClosed, std::memory_order_relaxed);
  }

  // The owner, at the start of the last round, after its earlier rounds.
  void open(int thread, std::int64_t begin, std::int64_t end) {
    slots_[thread].range.store(pack(begin, end), std::memory_order_release);
  }

  // The next task for `thread` of a team of `team`: its own stretch front to
  // back, then the others' from their backs. False when every stretch is
  // empty. Waits while another thread has not yet opened its stretch: it is
  // still in an earlier round (or has not started), and this thread would
  // only wait for it at the barrier that follows the loop. The wait spins a
  // little, then yields the core, which the late thread may be waiting for
  // where threads outnumber cores.
  bool next(int thread, int team, std::int64_t& task) {
    if (take(slots_[thread], /*front=*/true, task)) return true;
    for (int spins = 0;; ++spins) {
      bool closed = false;
      for (int i = 1; i < team; ++i) {
        Slot& victim = slots_[(thread + i) % team];
        if (victim.range.load(std::memory_order_acquire) == kClosed)
          closed = true;
        else if (take(victim, /*front=*/false, task))
          return true;
      }
      if (!closed) return false;
      if (spins < kSpins)
        _mm_pause();
      else
        std::this_thread::yield();
    }
  }

 private:
  // A stretch's remaining tasks [front, back) in one word, front in the high
  // half, so that an owner and a thief can both move it with one CAS.
  static constexpr int kSpins = 1000;  // pauses before yielding: some microseconds
  static constexpr std::uint64_t kClosed = std::numeric_limits<std::uint64_t>::max();
  static std::uint64_t pack(std::int64_t front, std::int64_t back) {
    return std::uint64_t(front) << 32 | std::uint64_t(back);
  }

  struct alignas(64) Slot {  // one cache line each: the owners' CASes do not collide
    std::atomic<std::uint64_t> range{kClosed};
  };

  static bool take(Slot& slot, bool front, std::int64_t& task) {
    std::uint64_t v = slot.range.load(std::memory_order_acquire);
    for (;;) {
      if (v == kClosed) return false;
      const std::uint64_t f = v >> 32, b = v & 0xffffffffu;
      if (f >= b) return false;
      const std::uint64_t taken =
          front ? pack(std::int64_t(f + 1), std::int64_t(b)) : pack(std::int64_t(f), std::int64_t(b - 1));
      if (slot.range.compare_exchange_weak(v, taken, std::memory_order_acq_rel, std::memory_order_acquire)) {
        task = std::int64_t(front ? f : b - 1);
        return true;
      }
    }
  }

  int size_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace sfc
