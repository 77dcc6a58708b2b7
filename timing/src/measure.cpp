// Cold-input GEMM timing (see sfc/measure.hpp for the method).
#include "sfc/measure.hpp"

#include "sfc/platform.hpp"
#include "sfc/settings.hpp"
#include "sfc/verify.hpp"

#include <omp.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>

namespace sfc {
namespace {

std::size_t round_up(std::size_t bytes) {
  return (bytes + AlignedBuffer::alignment - 1) / AlignedBuffer::alignment * AlignedBuffer::alignment;
}

// The process's counters behind timing_costs(), in nanoseconds.
std::atomic<std::int64_t> fill_ns{0}, filled_bytes{0}, flush_ns{0}, run_ns{0};

std::int64_t nanoseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

// Writes `bytes` of a scratch buffer with all threads, evicting what the
// caches held before. The buffer is kept for the process: allocating and
// faulting in up to 1 GiB per measurement would dominate short runs.
void flush_caches(std::size_t bytes, int threads) {
  static std::mutex mutex;
  static AlignedBuffer buffer;
  std::lock_guard lock(mutex);
  const auto t0 = std::chrono::steady_clock::now();
  if (buffer.bytes() < bytes) buffer = AlignedBuffer(bytes);
  auto* words = buffer.as<std::uint64_t>();
  const std::int64_t n = std::int64_t(bytes / sizeof(std::uint64_t));
  const int team = threads > 0 ? threads : default_threads();
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t i = 0; i < n; ++i) words[i] += 1;
  flush_ns += nanoseconds_since(t0);
}

#if defined(__x86_64__) || defined(__i386__)
// CPUID.(EAX=7,ECX=0):EBX bit 23. CLFLUSHOPT flushes lines in parallel;
// CLFLUSH, which every x86-64 has, one after another, much slower
// (docs/experiments/2026-12-07-evicted-operands-zen5.md).
bool has_clflushopt() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx >> 23 & 1);
  }();
  return has;
}

__attribute__((target("clflushopt"))) void flush_lines_opt(const unsigned char* p, std::int64_t lines) {
  for (std::int64_t i = 0; i < lines; ++i) _mm_clflushopt(const_cast<unsigned char*>(p + i * 64));
}

void flush_lines(const unsigned char* p, std::int64_t lines) {
  for (std::int64_t i = 0; i < lines; ++i) _mm_clflush(p + i * 64);
}
#endif

}  // namespace

void evict_range(const void* p, std::size_t bytes, int threads) {
#if defined(__x86_64__) || defined(__i386__)
  if (bytes == 0) return;
  const auto line = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t(63);
  const auto* first = reinterpret_cast<const unsigned char*>(line);
  const std::int64_t lines = std::int64_t((reinterpret_cast<std::uintptr_t>(p) + bytes - line + 63) / 64);
  // A team costs more than one thread flushing up to 1 MiB.
  const int team = lines < (std::int64_t(1) << 14) ? 1 : std::max(1, threads);
  const bool opt = has_clflushopt();
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const std::int64_t begin = lines * t / n, end = lines * (t + 1) / n;
    if (opt)
      flush_lines_opt(first + begin * 64, end - begin);
    else
      flush_lines(first + begin * 64, end - begin);
    _mm_mfence();
  }
#else
  (void)p, (void)bytes, (void)threads;
#endif
}

namespace {

// The memory ColdOperands share across a process: `inputs` holds random
// values of `input_dtype` in its first `inputs_filled` bytes; `outputs` is
// allocated (and zeroed once) up to its size. One ColdOperands at a time
// holds it (`leased`).
struct SharedColdMemory {
  std::mutex mutex;
  bool leased = false;
  AlignedBuffer inputs, outputs;
  DType input_dtype = DType::f32;
  std::size_t inputs_filled = 0;
  std::size_t outputs_touched = 0;  // zeroed once, so that no page faults inside a timed run
};

SharedColdMemory& shared_cold_memory() {
  static SharedColdMemory memory;
  return memory;
}

void count_fill(std::chrono::steady_clock::time_point t0, std::size_t bytes) {
  fill_ns += nanoseconds_since(t0);
  filled_bytes += std::int64_t(bytes);
}

// Random values of `dtype` in [-1, 1) over bytes [from, to) of `buffer`
// (`from` and `to` multiples of the element size).
void fill_inputs(unsigned char* buffer, std::size_t from, std::size_t to, DType dtype, unsigned seed,
                 int threads) {
  if (to <= from) return;
  const auto t0 = std::chrono::steady_clock::now();
  fill_uniform(buffer + from, (to - from) / input_size(dtype), dtype, seed + from, threads);
  count_fill(t0, to - from);
}

void zero(unsigned char* buffer, std::size_t from, std::size_t to) {
  if (to <= from) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::memset(buffer + from, 0, to - from);
  count_fill(t0, to - from);
}

}  // namespace

TimingCosts timing_costs() {
  return {double(fill_ns.load()) * 1e-9, filled_bytes.load(), double(flush_ns.load()) * 1e-9,
          double(run_ns.load()) * 1e-9};
}

std::string_view to_string(Statistic statistic) { return statistic == Statistic::min ? "min" : "mean"; }

Timing pooled(const Timing& a, const Timing& b) {
  if (a.reps == 0) return b;
  if (b.reps == 0) return a;
  Timing t;
  t.reps = a.reps + b.reps;
  t.min = std::min(a.min, b.min);
  t.mean = (a.mean * a.reps + b.mean * b.reps) / t.reps;
  // Sum of squared deviations from the pooled mean, from each part's own.
  const double squares = (a.reps - 1) * a.stddev * a.stddev + a.reps * (a.mean - t.mean) * (a.mean - t.mean) +
                         (b.reps - 1) * b.stddev * b.stddev + b.reps * (b.mean - t.mean) * (b.mean - t.mean);
  t.stddev = std::sqrt(squares / (t.reps - 1));
  return t;
}

namespace {
std::optional<std::size_t> cold_bytes_setting() {
  // At most half this machine's memory: the flush buffer is that big.
  const std::size_t most = std::size_t(sysconf(_SC_PHYS_PAGES)) / 2 * std::size_t(sysconf(_SC_PAGE_SIZE));
  return sfc::setting_count("SFC_COLD_BYTES", 0, most);
}
}  // namespace

bool evicts_lines() {
#if defined(__x86_64__) || defined(__i386__)
  return !cold_bytes_setting();
#else
  return false;
#endif
}

std::size_t cold_footprint_bytes() {
  if (const auto bytes = cold_bytes_setting()) return *bytes;
  // The platform's L3 (sysfs through hwloc, else CPUID), not glibc's
  // sysconf, which misread a VM's L3 without cache information in sysfs.
  const std::size_t two_l3 = 2 * running_machine_cache_sizes().l3_bytes;
  return std::clamp<std::size_t>(two_l3, std::size_t(64) << 20, std::size_t(1) << 30);
}

namespace {

Timing statistics(const std::vector<double>& seconds) {
  Timing t;
  t.reps = static_cast<int>(seconds.size());
  t.min = *std::min_element(seconds.begin(), seconds.end());
  for (double s : seconds) t.mean += s / t.reps;
  double var = 0;
  for (double s : seconds) var += (s - t.mean) * (s - t.mean);
  t.stddev = t.reps > 1 ? std::sqrt(var / (t.reps - 1)) : 0.0;
  return t;
}

}  // namespace

namespace {
thread_local RunObserver run_observer;
}  // namespace

RunObserver set_run_observer(RunObserver observer) {
  std::swap(observer, run_observer);
  return observer;
}

std::vector<Timing> time_rounds(int warmup, int reps, int sets, std::size_t flush_bytes,
                                std::span<const std::function<void(int set)>> runners, double budget_seconds,
                                const std::atomic<bool>* stop, int* next_set, int min_reps, int threads,
                                const std::function<void(int set)>& evict) {
  if (reps < 1) throw Error("repetitions must be >= 1, got " + std::to_string(reps));
  if (min_reps < 1 || min_reps > reps)
    throw Error("the runs made whatever the budget must be in 1.." + std::to_string(reps) + ", got " +
                std::to_string(min_reps));
  if (sets < 1) throw Error("input sets must be >= 1, got " + std::to_string(sets));
  const std::size_t n = runners.size();
  const bool budgeted = budget_seconds > 0;
  const auto over_budget = [&](double spent) { return budgeted && spent >= budget_seconds; };
  int set = next_set ? *next_set % sets : 0;
  RunProgress progress{.done = 0, .planned = int(n) * rounds_runs(warmup, reps, int(n))};
  const auto run = [&](std::size_t i, bool timed) {
    if (flush_bytes && set == 0) flush_caches(flush_bytes, threads);  // a new rotation reads cold sets again
    if (timed && evict) {
      const auto e0 = std::chrono::steady_clock::now();
      evict(set);
      flush_ns += nanoseconds_since(e0);
    }
    const auto t0 = std::chrono::steady_clock::now();
    runners[i](set);
    const std::int64_t ns = nanoseconds_since(t0);
    run_ns += ns;
    set = (set + 1) % sets;
    if (next_set) *next_set = set;
    ++progress.done;
    if (run_observer) run_observer(progress);
    return double(ns) * 1e-9;
  };
  const auto stopped = [&] { return stop && stop->load(); };

  std::vector<double> spent(n, 0.0);
  for (int round = 0; round < warmup; ++round)
    for (std::size_t i = 0; i < n; ++i) {
      if (over_budget(spent[i])) continue;
      if (stopped()) return {};
      spent[i] += run(i, false);
    }
  std::fill(spent.begin(), spent.end(), 0.0);
  std::vector<std::vector<double>> seconds(n);
  for (auto& s : seconds) s.reserve(std::size_t(reps));
  const auto wanted = [&](std::size_t i) {
    const int done = int(seconds[i].size());
    return done < reps && !(done >= min_reps && over_budget(spent[i]));
  };
  for (bool busy = true; busy;) {  // one timed round
    busy = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!wanted(i)) continue;
      // A visit settles first where another runner ran last (see sfc/measure.hpp).
      if (n > 1) {
        if (stopped()) return {};
        run(i, false);
      }
      for (int k = 0; k < kTimedPerVisit && wanted(i); ++k) {
        if (stopped()) return {};
        seconds[i].push_back(run(i, true));
        spent[i] += seconds[i].back();
      }
      busy = true;
    }
  }
  std::vector<Timing> timings;
  timings.reserve(n);
  for (const auto& s : seconds) timings.push_back(statistics(s));
  return timings;
}

Timing time_runs(int warmup, int reps, int sets, std::size_t flush_bytes,
                 const std::function<void(int set)>& run, double budget_seconds, int threads,
                 const std::function<void(int set)>& evict) {
  return time_rounds(warmup, reps, sets, flush_bytes, std::span(&run, 1), budget_seconds, nullptr, nullptr, 1,
                     threads, evict)
      .front();
}

namespace {

// At most half the machine's memory goes to input sets: beyond that, fewer
// sets plus a flush keep the inputs just as cold.
double half_memory() { return 0.5 * double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)); }

// (Counted in double: the byte counts of absurd shapes overflow 64 bits.)
void check_set_fits(const GemmShape& s, double one_set) {
  if (one_set > half_memory())
    throw Error("one set of inputs for " + to_string(s) + " needs " +
                std::to_string(static_cast<long long>(one_set / (1 << 20))) +
                " MiB, more than half of this machine's memory");
}

}  // namespace

void ColdOperands::check_fits(const GemmShape& s, DType dt) {
  check_set_fits(s, (double(s.m) * double(s.k) + double(s.k) * double(s.n)) * double(input_size(dt)) +
                        double(s.m) * double(s.n) * double(output_size(dt)));
}

ColdOperands::ColdOperands(const GemmPlan& plan, Layout layout, int runs, unsigned seed, GemmArguments call)
    : layout_(layout), call_(call), threads_(plan.threads()) {
  const GemmShape& s = plan.shape();
  const DType dt = plan.dtype();
  const bool blocked = layout == Layout::blocked, row = layout == Layout::row_major;
  const std::size_t a_count = blocked ? plan.a_elements() : std::size_t(s.m * s.k);
  const std::size_t b_count = blocked ? plan.b_elements() : std::size_t(s.k * s.n);
  const std::size_t c_count = blocked ? plan.c_elements() : std::size_t(s.m * s.n);
  if (blocked && !call.plain_product())
    throw Error("transposes, alpha and beta need a plain layout (row or col), not the blocked one");
  // Tight leading dimensions of the stored matrices: op(A) is M x K, so A is
  // K x M when transposed (and B N x K); row-major: the stored columns.
  const bool ta = call.trans_a == Transpose::transpose, tb = call.trans_b == Transpose::transpose;
  lda_ = row ? (ta ? s.m : s.k) : (ta ? s.k : s.m);
  ldb_ = row ? (tb ? s.k : s.n) : (tb ? s.n : s.k);
  ldc_ = row ? s.n : s.m;
  check_set_fits(
      s, double(a_count + b_count) * double(input_size(dt)) + double(c_count) * double(output_size(dt)));
  a_bytes_ = round_up(a_count * input_size(dt));
  b_bytes_ = round_up(b_count * input_size(dt));
  c_bytes_ = round_up(c_count * output_size(dt));
  set_stride_ = a_bytes_ + b_bytes_;  // of the inputs; C has its own memory, c_bytes_ a set

  const std::size_t cold = cold_footprint_bytes();
  evicts_ = evicts_lines();
  if (evicts_) {
    // One set, its lines evicted before every timed run (evict()).
    sets_ = c_sets_ = 1;
  } else {
    // Enough sets that rotating over them streams the cold footprint; if fewer
    // the runs need fewer sets than that, each set is used once, after a flush.
    const std::size_t wanted = std::max<std::size_t>(1, (cold + set_stride_ - 1) / set_stride_);
    const std::size_t affordable =
        std::max<std::size_t>(1, std::size_t(half_memory() / double(set_stride_ + c_bytes_)));
    sets_ = int(std::min({wanted, std::size_t(std::max(runs, 1)), affordable}));
    flush_bytes_ = std::size_t(sets_) * set_stride_ < cold ? cold : 0;
    // C has sets of its own, as many as stream the cold footprint (one more for
    // the partial last): a thin K's sets of A and B are small, its C is not.
    c_sets_ = int(std::min(std::size_t(sets_), (cold + c_bytes_ - 1) / c_bytes_ + 1));
  }
  const std::size_t input_bytes = std::size_t(sets_) * set_stride_,
                    output_bytes = std::size_t(c_sets_) * c_bytes_;
  // The shared memory serves inputs, and separately outputs, up to twice the
  // cold footprint (more is one large shape's, not worth keeping for the
  // process): a shape whose C sets are large still reuses the filled inputs.
  const std::size_t keep = 2 * std::max(cold, std::size_t(64) << 20);
  try {
    SharedColdMemory& shared = shared_cold_memory();
    std::unique_lock lock(shared.mutex);
    if (!shared.leased && input_bytes <= keep) {
      // Room for the next shapes: their sets differ from these by a stride or
      // so, and a buffer that grows is filled again from its start.
      const auto capacity = [&](std::size_t bytes) {
        return std::min(keep, std::max(bytes + bytes / 2, evicts_ ? std::size_t(64) << 20 : cold + cold / 2));
      };
      if (shared.input_dtype != dt) shared.inputs_filled = 0;
      if (shared.inputs.bytes() < input_bytes) {
        shared.inputs = AlignedBuffer();  // free before allocating the larger one
        shared.inputs = AlignedBuffer(capacity(input_bytes));
        shared.inputs_filled = 0;
      }
      if (output_bytes > keep) {
        own_outputs_ = AlignedBuffer(output_bytes);
        zero(own_outputs_.as<unsigned char>(), 0, output_bytes);
        outputs_ = own_outputs_.as<unsigned char>();
      } else {
        if (shared.outputs.bytes() < output_bytes) {
          shared.outputs = AlignedBuffer();
          shared.outputs = AlignedBuffer(capacity(output_bytes));
          shared.outputs_touched = 0;
        }
        if (call.beta != 0) shared.outputs_touched = 0;  // C is read: start from zero as before
        zero(shared.outputs.as<unsigned char>(), shared.outputs_touched, output_bytes);
        shared.outputs_touched = std::max(shared.outputs_touched, output_bytes);
        outputs_ = shared.outputs.as<unsigned char>();
      }
      // Only what no earlier ColdOperands of this input type filled.
      fill_inputs(shared.inputs.as<unsigned char>(), shared.inputs_filled, input_bytes, dt, seed, threads_);
      shared.inputs_filled = std::max(shared.inputs_filled, input_bytes);
      shared.input_dtype = dt;
      shared.leased = true;
      flush_first_ = !evicts_;  // (evict() makes every timed run's set cold anyway)
      inputs_ = shared.inputs.as<unsigned char>();
      shared_lease_ = std::shared_ptr<void>(&shared, [](void* memory) {
        auto* m = static_cast<SharedColdMemory*>(memory);
        const std::lock_guard release(m->mutex);
        m->leased = false;
      });
      return;
    }
    lock.unlock();
    own_inputs_ = AlignedBuffer(input_bytes);
    own_outputs_ = AlignedBuffer(output_bytes);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating " + std::to_string(sets_) + " input sets of " +
                std::to_string(set_stride_ >> 20) + " MiB and " + std::to_string(c_sets_) + " outputs of " +
                std::to_string(c_bytes_ >> 20) + " MiB");
  }
  inputs_ = own_inputs_.as<unsigned char>();
  outputs_ = own_outputs_.as<unsigned char>();
  fill_inputs(inputs_, 0, input_bytes, dt, seed, threads_);
  zero(outputs_, 0, output_bytes);
}

std::function<void(int set)> ColdOperands::eviction() const {
  if (!evicts_) return {};
  return [this](int set) { evict(set); };
}

const void* ColdOperands::a(int set) const { return inputs_ + std::size_t(set) * set_stride_; }
const void* ColdOperands::b(int set) const { return inputs_ + std::size_t(set) * set_stride_ + a_bytes_; }
void ColdOperands::evict(int set) const {
  evict_range(a(set), a_bytes_, threads_);
  evict_range(b(set), b_bytes_, threads_);
  evict_range(c(set), c_bytes_, threads_);
}

void* ColdOperands::c(int set) { return outputs_ + std::size_t(set % c_sets_) * c_bytes_; }
const void* ColdOperands::c(int set) const { return outputs_ + std::size_t(set % c_sets_) * c_bytes_; }

Timing ColdOperands::time(GemmPlan& plan, int warmup, int reps, double budget_seconds) {
  GemmPlan* const plans[] = {&plan};
  return time(plans, warmup, reps, budget_seconds).front();
}

std::vector<Timing> ColdOperands::time(std::span<GemmPlan* const> plans, int warmup, int reps,
                                       double budget_seconds, const std::atomic<bool>* stop, int min_reps) {
  std::vector<std::function<void(int)>> runners;
  runners.reserve(plans.size());
  for (GemmPlan* plan : plans)
    runners.emplace_back([this, plan](int set) {
      if (layout_ == Layout::blocked)
        plan->execute(a(set), b(set), c(set));
      else
        plan->gemm(layout_, call_.trans_a, call_.trans_b, call_.alpha, a(set), lda_, b(set), ldb_, call_.beta,
                   c(set), ldc_);
    });
  if (flush_first_) {
    flush_caches(cold_footprint_bytes(), threads_);
    flush_first_ = false;
  }
  return time_rounds(warmup, reps, sets_, flush_bytes_, runners, budget_seconds, stop, &next_set_, min_reps,
                     threads_, eviction());
}

}  // namespace sfc
