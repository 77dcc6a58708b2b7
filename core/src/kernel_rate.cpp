#include "sfc/kernel_rate.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "plan_impl.hpp"
#include "sfc/clocks.hpp"

namespace sfc {

double kernel_gflops_per_core(int threads, int repetitions) {
  if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
  libxsmm_init();
  // One thread's operands: a batch of 8 A blocks and 8 B blocks and one C
  // block, 2 x 8 x 16 KiB + 16 KiB with 64^3 blocks: in L2. The blocked
  // layout's strides, as the plan dispatches them.
  const BlockSizes blk = choose_blocks({4096, 4096, 4096}, DType::f32, 1);
  constexpr unsigned long long batch = 8;
  Addressing at{};
  at.a_k_block = std::int64_t(blk.bm) * blk.bk;
  at.b_k_block = std::int64_t(blk.bk) * blk.bn;
  at.last_rows = blk.bm;
  at.last_cols = blk.bn;
  TileKernels<libxsmm_smmfunction_reducebatch_strd> kernels{};
  const bool ok = dispatch_libxsmm(kernels, libxsmm_smmdispatch_reducebatch_strd, blk, at, blk.bm, blk.bk,
                                   blk.bm, input_size(DType::f32), 0);
  const auto kernel = kernels[0][0].rest;
  if (!ok)
    throw Error(std::string("LIBXSMM generates no fp32 batch-reduce kernel for ISA '") +
                libxsmm_get_target_arch() + "'");

  const std::size_t a_floats = batch * std::size_t(at.a_k_block),
                    b_floats = batch * std::size_t(at.b_k_block);
  const std::size_t c_floats = std::size_t(blk.bm) * std::size_t(blk.bn);
  std::vector<AlignedBuffer> a, b, c;
  for (int t = 0; t < threads; ++t) {
    a.emplace_back(a_floats * sizeof(float));
    b.emplace_back(b_floats * sizeof(float));
    c.emplace_back(c_floats * sizeof(float));
  }
  // ~0.1 s per repetition at the ~200 GFLOP/s the kernel reaches on AVX-512.
  const double flops_per_call = 2.0 * blk.bm * blk.bn * blk.bk * double(batch);
  const int calls = std::max(100, int(2e10 / flops_per_call));
  std::vector<double> best(std::size_t(threads), 0.0);

#pragma omp parallel num_threads(threads)
  {
    const std::size_t t = std::size_t(omp_get_thread_num());
    // Small values: C accumulates thousands of batches without overflowing.
    std::fill_n(a[t].as<float>(), a_floats, 1e-3f);
    std::fill_n(b[t].as<float>(), b_floats, 1e-3f);
    std::fill_n(c[t].as<float>(), c_floats, 0.0f);
    for (int i = 0; i < calls / 10; ++i) kernel(a[t].as<float>(), b[t].as<float>(), c[t].as<float>(), &batch);
    for (int rep = 0; rep < repetitions; ++rep) {
#pragma omp barrier
      const double start = thread_cpu_seconds();
      for (int i = 0; i < calls; ++i) kernel(a[t].as<float>(), b[t].as<float>(), c[t].as<float>(), &batch);
      best[t] = std::max(best[t], calls * flops_per_call / (thread_cpu_seconds() - start));
    }
  }
  return std::accumulate(best.begin(), best.end(), 0.0) / threads / 1e9;
}

}  // namespace sfc
