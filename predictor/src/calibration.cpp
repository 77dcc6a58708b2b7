// The two calibration microbenchmarks. Each thread times itself with its own
// CPU clock (CLOCK_THREAD_CPUTIME_ID), so that on a busy machine the time it
// spends descheduled does not count: the rates are those of a core while it
// runs the GEMM's threads. Each takes the best of a few repetitions, since
// interference only ever slows a run.
#include "sfc/calibration.hpp"

#include <libxsmm.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "sfc/aligned_buffer.hpp"
#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"

namespace sfc {
namespace {

constexpr int repetitions = 3;

// Seconds of CPU time the calling thread has used.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

// One thread's operands for the batch-reduce kernel: `batch` A blocks, `batch`
// B blocks and one C block, 2 x 8 x 16 KiB + 16 KiB with 64^3 blocks: in L2.
struct KernelOperands {
  AlignedBuffer a, b, c;
};

double measure_gamma(int threads) {
  // The blocks the engine uses for a large fp32 GEMM, where the kernel's rate matters most.
  const BlockSizes blk = choose_blocks({4096, 4096, 4096}, DType::f32);
  constexpr unsigned long long batch = 8;
  const float alpha = 1, beta = 1;  // accumulate into C, as every round after the first does
  const int flags = 0;
  const auto kernel = libxsmm_smmdispatch_reducebatch_strd(
      blk.bm, blk.bn, blk.bk, libxsmm_blasint(blk.bm) * blk.bk * sizeof(float),
      libxsmm_blasint(blk.bk) * blk.bn * sizeof(float), nullptr, nullptr, nullptr, &alpha, &beta, &flags,
      nullptr);
  if (!kernel)
    throw Error(std::string("LIBXSMM generates no fp32 batch-reduce kernel for ISA '") +
                libxsmm_get_target_arch() + "': cannot calibrate");

  const std::size_t a_floats = batch * blk.bm * blk.bk, b_floats = batch * blk.bk * blk.bn;
  const std::size_t c_floats = std::size_t(blk.bm) * blk.bn;
  std::vector<KernelOperands> ops;
  for (int t = 0; t < threads; ++t)
    ops.push_back({AlignedBuffer(a_floats * sizeof(float)), AlignedBuffer(b_floats * sizeof(float)),
                   AlignedBuffer(c_floats * sizeof(float))});

  // ~0.1 s per repetition at the ~200 GFLOP/s the kernel reaches on AVX-512.
  const double flops_per_call = 2.0 * double(blk.bm) * blk.bn * blk.bk * double(batch);
  const int calls = std::max(100, int(2e10 / flops_per_call));
  std::vector<double> best(threads, 0.0);

#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    KernelOperands& mine = ops[std::size_t(t)];
    // Small values: C accumulates thousands of batches without overflowing.
    std::fill_n(mine.a.as<float>(), a_floats, 1e-3f);
    std::fill_n(mine.b.as<float>(), b_floats, 1e-3f);
    std::fill_n(mine.c.as<float>(), c_floats, 0.0f);
    for (int i = 0; i < calls / 10; ++i)
      kernel(mine.a.as<float>(), mine.b.as<float>(), mine.c.as<float>(), &batch);
    for (int rep = 0; rep < repetitions; ++rep) {
#pragma omp barrier
      const double start = thread_cpu_seconds();
      for (int i = 0; i < calls; ++i)
        kernel(mine.a.as<float>(), mine.b.as<float>(), mine.c.as<float>(), &batch);
      best[std::size_t(t)] =
          std::max(best[std::size_t(t)], calls * flops_per_call / (thread_cpu_seconds() - start));
    }
  }
  return std::accumulate(best.begin(), best.end(), 0.0) / threads / 1e9;
}

double measure_beta(int threads) {
  // At least 64 MiB even when SFC_COLD_BYTES asks for less (tests do): beyond any L2.
  const std::size_t count = std::max(cold_footprint_bytes(), std::size_t(64) << 20) / sizeof(double);
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
  libxsmm_init();
  try {
    return {measure_gamma(threads), measure_beta(threads)};
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating the calibration buffers");
  }
}

}  // namespace sfc
