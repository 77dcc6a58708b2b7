#include "sfc/kernel_rate.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kernel_dispatch.hpp"
#include "sfc/clocks.hpp"

namespace sfc {
namespace {

// One thread's operands: a batch of 8 A blocks and 8 B blocks and one C
// block, 2 x 8 x 16 KiB + 16 KiB with 64^3 fp32 blocks: in L2. A's strides
// are the blocked layout's; B is in bk x bn blocks one after the other, where
// plans store a column panel as one K x bn matrix (Impl::packed_b_ld) -- a
// layout measured for what it saves on cold operands, not on these.
constexpr unsigned long long kBatch = 8;

// Times `kernel` (C += the batch) on every thread at once, each on its own
// operands filled with `one` (a small value: C accumulates thousands of
// batches without overflowing); GFLOP/s per thread, averaged.
template <class In, class Out, class Kernel>
double time_kernel(const Kernel& kernel, const BlockSizes& blk, const Addressing& at, In one, int threads,
                   int repetitions) {
  const std::size_t a_elements = kBatch * std::size_t(at.a_k_block),
                    b_elements = kBatch * std::size_t(at.b_k_block);
  const std::size_t c_elements = std::size_t(blk.bm) * std::size_t(blk.bn);
  std::vector<AlignedBuffer> a, b, c;
  for (int t = 0; t < threads; ++t) {
    a.emplace_back(a_elements * sizeof(In));
    b.emplace_back(b_elements * sizeof(In));
    c.emplace_back(c_elements * sizeof(Out));
  }
  // About a tenth of a second per repetition on an AVX-512 core.
  const double flops_per_call = 2.0 * blk.bm * blk.bn * blk.bk * double(kBatch);
  const int calls = std::max(100, int(2e10 / flops_per_call));
  std::vector<double> best(std::size_t(threads), 0.0);

#pragma omp parallel num_threads(threads)
  {
    const std::size_t t = std::size_t(omp_get_thread_num());
    In* const pa = a[t].as<In>();
    In* const pb = b[t].as<In>();
    Out* const pc = c[t].as<Out>();
    std::fill_n(pa, a_elements, one);
    std::fill_n(pb, b_elements, one);
    std::fill_n(pc, c_elements, Out(0));
    for (int i = 0; i < calls / 10; ++i) kernel(pa, pb, pc, &kBatch);
    for (int rep = 0; rep < repetitions; ++rep) {
#pragma omp barrier
      const double start = thread_cpu_seconds();
      for (int i = 0; i < calls; ++i) kernel(pa, pb, pc, &kBatch);
      best[t] = std::max(best[t], calls * flops_per_call / (thread_cpu_seconds() - start));
    }
  }
  return std::accumulate(best.begin(), best.end(), 0.0) / threads / 1e9;
}

// The LIBXSMM batch-reduce kernel (fp32 or fp64) a plan dispatches for the
// blocks `blk`, made by `make` and timed by time_kernel; 0 if LIBXSMM makes
// none for this CPU.
template <class T, class Kernel, class Make>
double time_libxsmm(Make make, const BlockSizes& blk, const Addressing& at, T one, int threads,
                    int repetitions) {
  TileKernels<Kernel> k{};
  if (!dispatch_libxsmm(k, make, blk, at, blk.bm, blk.bk, blk.bm, sizeof(T), 0)) return 0;
  return time_kernel<T, T>(k[0][0].rest, blk, at, one, threads, repetitions);
}

}  // namespace

double kernel_gflops_per_core(int threads, int repetitions, DType dtype) {
  if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
  libxsmm_init();
  const BlockSizes blk = choose_blocks({4096, 4096, 4096}, dtype, 1);
  Addressing at{};
  at.a_k_block = std::int64_t(blk.bm) * blk.bk;
  at.b_k_block = std::int64_t(blk.bk) * blk.bn;
  at.last_rows = blk.bm;
  at.last_cols = blk.bn;
  const auto none = [&] {
    return Error(std::string("LIBXSMM generates no ") + std::string(to_string(dtype)) +
                 " batch-reduce kernel for ISA '" + libxsmm_get_target_arch() + "'");
  };
  double rate = 0;  // 0 while no kernel was made
  switch (dtype) {
    case DType::f32:
      rate = time_libxsmm<float, libxsmm_smmfunction_reducebatch_strd>(libxsmm_smmdispatch_reducebatch_strd,
                                                                       blk, at, 1e-3f, threads, repetitions);
      break;
    case DType::f64:
      rate = time_libxsmm<double, libxsmm_dmmfunction_reducebatch_strd>(libxsmm_dmmdispatch_reducebatch_strd,
                                                                        blk, at, 1e-3, threads, repetitions);
      break;
    case DType::bf16: {  // the kernel a plan runs: on AMX tiles where it may (amx_brgemm.hpp)
      TileKernels<Bf16Kernel> k{};
      const bool ok = amx_enabled()
                          ? dispatch(k, blk, at,
                                     [&](int m, int n, bool accumulate) {
                                       return Bf16Kernel{.amx = std::make_shared<const AmxBrgemm>(
                                                             m, n, blk.bk, at.a_k_block, at.b_k_block, blk.bm,
                                                             blk.bk, blk.bm, accumulate)};
                                     })
                          : dispatch_libxsmm(k, libxsmm_bsmmdispatch_reducebatch_strd, blk, at, blk.bm,
                                             blk.bk, blk.bm, input_size(dtype), LIBXSMM_GEMM_FLAG_VNNI_A);
      const libxsmm_bfloat16 one = 0x3a83;  // bf16 1e-3 (LIBXSMM's type holds the bits)
      if (ok) rate = time_kernel<libxsmm_bfloat16, float>(k[0][0].rest, blk, at, one, threads, repetitions);
      break;
    }
  }
  if (rate <= 0) throw none();
  return rate;
}

}  // namespace sfc
