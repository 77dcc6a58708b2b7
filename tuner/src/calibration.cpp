// The two calibration microbenchmarks: gamma is the engine's kernel rate
// (sfc/kernel_rate.hpp, in core, which dispatches the kernel), beta the
// bandwidth measured here. Each thread times itself with its own
// CPU clock (CLOCK_THREAD_CPUTIME_ID), so that on a busy machine the time it
// spends descheduled does not count: the rates are those of a core while it
// runs the GEMM's threads. Each takes the best of a few repetitions, since
// interference only ever slows a run.
#include "sfc/calibration.hpp"

#include <omp.h>
#include <time.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "sfc/aligned_buffer.hpp"
#include "sfc/clocks.hpp"
#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/kernel_rate.hpp"
#include "sfc/measure.hpp"

namespace sfc {
namespace {

constexpr int repetitions = 3;

double measure_beta(int threads) {
  // The reads must come from memory. Where the lines can be evicted, 64 MiB
  // (beyond any L2) evicted before each repetition; else more than the cold
  // footprint (2x the L3), at least 64 MiB even when SFC_COLD_BYTES asks for
  // less (tests do). Faulting in a footprint that follows a misread L3 cost
  // a fresh database's calibration most of its time
  // (docs/experiments/2026-12-07-evicted-operands-zen5.md).
  const bool evict = evicts_lines();
  const std::size_t floor = std::size_t(64) << 20;
  const std::size_t count = (evict ? floor : std::max(cold_footprint_bytes(), floor)) / sizeof(double);
  AlignedBuffer buffer(count * sizeof(double));
  double* data = buffer.as<double>();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t i = 0; i < count; ++i) data[i] = 1.0;  // first touch by the reading thread

  // Each thread reads its own static share, all at once (a barrier per
  // repetition); beta is the sum of their rates.
  std::vector<double> best(threads, 0.0), checksum(threads, 0.0);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const std::size_t begin = count * std::size_t(t) / std::size_t(threads);
    const std::size_t end = count * std::size_t(t + 1) / std::size_t(threads);
    for (int rep = 0; rep < repetitions; ++rep) {
      if (evict) evict_range(data + begin, (end - begin) * sizeof(double), 1);
#pragma omp barrier
      const double start = thread_cpu_seconds();
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (std::size_t i = begin; i < end; ++i) sum += data[i];
      const double bytes = double((end - begin) * sizeof(double));
      best[std::size_t(t)] = std::max(best[std::size_t(t)], bytes / (thread_cpu_seconds() - start));
      checksum[std::size_t(t)] += sum;
    }
  }
  // The sum is used, so the reads cannot be optimised away.
  if (std::accumulate(checksum.begin(), checksum.end(), 0.0) != double(count) * repetitions)
    throw Error("bandwidth benchmark read wrong data");
  return std::accumulate(best.begin(), best.end(), 0.0) / 1e9;
}

}  // namespace

Calibration calibrate(int threads) {
  if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
  try {
    return {kernel_gflops_per_core(threads, repetitions), measure_beta(threads)};
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating the calibration buffers");
  }
}

}  // namespace sfc
