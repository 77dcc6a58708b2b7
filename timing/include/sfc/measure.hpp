// Honest GEMM timing: cold inputs, warm-up, repetitions, mean/min/stddev.
//
// Every timed run reads A and B (and writes C) from memory, not from a cache
// warmed by the run before. On x86 ColdOperands holds one set of operands
// and evicts its cache lines (CLFLUSHOPT) before each timed run: the cost
// follows the operands' size, not the cache sizes the machine reports (a VM
// that misreads its L3 made every shape stream far more than its operands:
// docs/experiments/2026-12-07-evicted-operands-zen5.md), and the plan's own
// buffers stay as the call before left them, as in a program
// that calls the same shape again. Elsewhere, or with SFC_COLD_BYTES set,
// it holds enough independent sets that runs rotate over them through the
// cold footprint (2x the last-level cache, 64 MiB..1 GiB), and when the sets
// together are smaller than that each set is used at most once after a
// flush of the caches.
//
// The input and output memory of the sets is the process's, reused from one
// ColdOperands to the next (the shapes of one tuning run): it grows when a
// shape needs more, and only bytes no earlier ColdOperands of the same input
// type filled are filled, so a small shape after another pays no fill. A
// ColdOperands made while another one lives gets memory of its own.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sfc/aligned_buffer.hpp"
#include "sfc/gemm.hpp"

namespace sfc {

// Which figure of a Timing is "the time": the tuner ranks configurations by
// their fastest run (sfc/tuner.hpp says why); a benchmark may report either.
enum class Statistic { min, mean };
std::string_view to_string(Statistic statistic);  // "min", "mean"

struct Timing {
  double mean = 0, min = 0, stddev = 0;  // seconds
  int reps = 0;
  double seconds(Statistic statistic) const { return statistic == Statistic::min ? min : mean; }
};

// The timing of `a`'s and `b`'s runs together: the faster min, the mean and
// sample standard deviation of all reps (either may be empty, reps = 0).
Timing pooled(const Timing& a, const Timing& b);

// Times `run(set)` `warmup` times untimed, then `reps` times; `set` rotates over
// 0..sets-1 and a cache flush precedes the timed runs when `flush_bytes` > 0;
// `evict(set)`, when given, runs (untimed) before each timed run.
// With `budget_seconds` > 0 each phase stops early once its runs have taken
// that long (at least one timed run; a warm-up phase stops after the run that
// crossed it): large shapes get fewer runs, small ones all of them.
// The flush runs on `threads` threads (0: default_threads()), as the run timed does.
Timing time_runs(int warmup, int reps, int sets, std::size_t flush_bytes,
                 const std::function<void(int set)>& run, double budget_seconds = 0, int threads = 0,
                 const std::function<void(int set)>& evict = {});

// Times several runners in rounds: a warm-up round runs every runner once
// (`warmup` rounds), then each timed round visits every runner once more, until
// each has `reps` timed runs or its runs took `budget_seconds`. Timed one
// after the other, the configurations of a shape disagreed between two
// tunings of it, in spells: a slow spell of the machine made whatever was
// being timed look slow, and the winner was often the luckiest
// (docs/experiments/2026-12-01-rounds-xeon.md). In rounds a spell falls on
// every runner alike.
// With several runners a visit makes one untimed run first, then up to
// kTimedPerVisit timed ones: a GEMM pays for what the call before it left in
// the caches, and in use the call before is mostly the same shape with the same
// configuration. Timed straight after another configuration, the timings
// mixed and picked the wrong winner
// (docs/experiments/2026-12-04-settled-timing-xeon.md).
// `set` rotates over 0..sets-1 across all runners and runs, and the caches are
// flushed before the first timed round and whenever the rotation starts again,
// when `flush_bytes` > 0; `evict(set)`, when given, runs before each timed run
// (not before the warm-up and settling runs), untimed.
// `min_reps` (<= reps) timed runs are made whatever the budget: one slow run
// (a timer tick, another process) can take a short configuration's whole
// budget, and the one run left would read it slow. The budget counts timed
// runs only.
// Returns one Timing per runner, or nothing when `stop` was set (checked
// before every run). `next_set`, when given, is where the rotation starts and
// is left where the next call should start: calls that share input sets
// (one shape's screen, full timing and confirmation) then keep rotating
// instead of reading set 0 again while it may still be in the last-level cache.
inline constexpr int kTimedPerVisit = 2;
// The runs time_rounds makes of each of `runners` runners, budget aside.
constexpr int rounds_runs(int warmup, int reps, int runners) {
  return warmup + reps + (runners > 1 ? (reps + kTimedPerVisit - 1) / kTimedPerVisit : 0);
}
std::vector<Timing> time_rounds(int warmup, int reps, int sets, std::size_t flush_bytes,
                                std::span<const std::function<void(int set)>> runners,
                                double budget_seconds = 0, const std::atomic<bool>* stop = nullptr,
                                int* next_set = nullptr, int min_reps = 1, int threads = 0,
                                const std::function<void(int set)>& evict = {});

// The runs the time_rounds call in progress made (warm-up included) and
// plans: runners x rounds_runs(warmup, reps, runners); a budget or a stop can
// end it sooner. For a progress display (sfc-tune tune's bar).
struct RunProgress {
  int done = 0, planned = 0;
};
using RunObserver = std::function<void(const RunProgress&)>;
// Sets this thread's observer, called after each run time_rounds makes on
// this thread (empty: none); returns the one it replaces.
RunObserver set_run_observer(RunObserver observer);

// What cold timing cost this process so far, besides the GEMMs it timed:
// filling input sets with random values, flushing the caches, and the runs
// themselves (warm-up, settling and timed runs alike). A caller reports the
// difference of two snapshots as the fixed cost of the shapes between them.
struct TimingCosts {
  double fill_seconds = 0;        // allocating and filling input and output sets
  std::int64_t filled_bytes = 0;  // of them
  double flush_seconds = 0;       // cache flushes and evictions
  double run_seconds = 0;         // every GEMM run time_rounds made
  TimingCosts operator-(const TimingCosts& before) const {
    return {fill_seconds - before.fill_seconds, filled_bytes - before.filled_bytes,
            flush_seconds - before.flush_seconds, run_seconds - before.run_seconds};
  }
};
TimingCosts timing_costs();

// Bytes that must be streamed to evict the caches: 2 x L3 (one instance, as
// running_machine_cache_sizes() reads it), clamped to 64 MiB..1 GiB; the
// environment variable SFC_COLD_BYTES overrides it.
std::size_t cold_footprint_bytes();
// Whether ColdOperands evict their operands' lines rather than stream the
// cold footprint: on x86, unless SFC_COLD_BYTES is set.
bool evicts_lines();
// Removes [p, p + bytes) from every cache level (dirty lines are written
// back: CLFLUSHOPT, else CLFLUSH), on up to `threads` threads, and returns
// once the flushes are done. Does nothing where the CPU is not x86.
void evict_range(const void* p, std::size_t bytes, int threads);

// The BLAS arguments a plain-layout timing calls GemmPlan::gemm with; the
// defaults are C = A * B.
struct GemmArguments {
  Transpose trans_a = Transpose::none, trans_b = Transpose::none;
  double alpha = 1, beta = 0;
  bool plain_product() const {
    return trans_a == Transpose::none && trans_b == Transpose::none && alpha == 1 && beta == 0;
  }
};

class ColdOperands {
 public:
  // Random inputs in [-1, 1) for `plan`'s shape and dtype, in `layout`
  // (blocked buffers match the plan's blocking; the plan's K_layers and
  // k_block_factor do not change the blocked sizes, so one ColdOperands serves
  // every configuration of a shape). `runs` = warm-up + timed runs.
  // `call`: plain layouts only; a transposed operand is stored transposed
  // (op(A) = A^T: A is K x M in `layout`).
  ColdOperands(const GemmPlan& plan, Layout layout, int runs, unsigned seed = 42, GemmArguments call = {});

  // Throws sfc::Error unless one set of `shape`'s inputs (A, B and C as plain
  // matrices) fits in half of this machine's memory, as the constructor
  // requires: called before a plan is built, it refuses an absurd shape at
  // once instead of after planning it (a 2e6 x 2e6 plan's curve map alone
  // took 17 s and gigabytes).
  static void check_fits(const GemmShape& shape, DType dtype);

  // Times plan.execute (blocked) or plan.gemm (row/col) over the sets
  // (`budget_seconds`: see time_runs).
  Timing time(GemmPlan& plan, int warmup, int reps, double budget_seconds = 0);
  // Times the plans of one shape in rounds (see time_rounds); empty when
  // `stop` ended it.
  std::vector<Timing> time(std::span<GemmPlan* const> plans, int warmup, int reps, double budget_seconds = 0,
                           const std::atomic<bool>* stop = nullptr, int min_reps = 1);

  int sets() const { return sets_; }
  // Whether each timed run evicts its set first (evicts_lines(); one set).
  bool evicts() const { return evicts_; }
  // Evicts set `set`'s A, B and C from every cache level (x86 only).
  void evict(int set) const;
  // evict() as time_rounds takes it: empty where the sets rotate instead.
  std::function<void(int set)> eviction() const;
  // The distinct C matrices the sets rotate over: enough to stream the cold
  // footprint, never more than the sets (set i writes C number i % c_sets()).
  int c_sets() const { return c_sets_; }
  // The bytes flushed before each rotation over the sets (0: the sets alone
  // are the cold footprint).
  std::size_t flush_bytes() const { return flush_bytes_; }
  const void* a(int set) const;
  const void* b(int set) const;
  void* c(int set);
  const void* c(int set) const;
  std::int64_t lda() const { return lda_; }
  std::int64_t ldb() const { return ldb_; }
  std::int64_t ldc() const { return ldc_; }
  Layout layout() const { return layout_; }
  const GemmArguments& arguments() const { return call_; }

 private:
  Layout layout_;
  GemmArguments call_;
  int sets_ = 0, c_sets_ = 0;
  std::size_t a_bytes_ = 0, b_bytes_ = 0, c_bytes_ = 0, flush_bytes_ = 0;
  std::int64_t lda_ = 0, ldb_ = 0, ldc_ = 0;
  std::size_t set_stride_ = 0;
  bool evicts_ = false;
  int threads_ = 0;   // the plan's: the fills and flushes run on as many
  int next_set_ = 0;  // where the rotation over the sets goes on (see time_rounds)
  // sets x (A | B) and sets x C, each slice 64-byte aligned: in the process's
  // shared memory while `shared_lease_` holds it, else in own_inputs_/own_outputs_.
  unsigned char* inputs_ = nullptr;
  unsigned char* outputs_ = nullptr;
  std::shared_ptr<void> shared_lease_;
  bool flush_first_ = false;  // the shared memory's last user may have left these sets cached
  AlignedBuffer own_inputs_, own_outputs_;
};

}  // namespace sfc
