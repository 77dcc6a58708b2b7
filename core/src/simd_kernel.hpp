// The batch-reduce kernels core/ writes itself, for the tile shapes LIBXSMM
// 1.17 runs badly. Called as LIBXSMM's are: kernel(a, b, c, &count) computes
// C(m x n) = [C +] sum over the batch's `count` blocks i of A_i(m x bk) B_i(bk x n),
// all column-major, A_i at a + i * stride_a, B_i at b + i * stride_b.
//
// - Single row (m = 1): LIBXSMM vectorises along M, so a one-row tile runs on
//   one lane of sixteen, far below what streaming the operands allows
//   (docs/experiments/2026-12-02-thin-kernels-zen5.md). Such tiles arise where the
//   loop's M is 1: a row-major call with N = 1 (run as its transpose), or a
//   column-major or blocked one with M = 1. A is then one contiguous run of K
//   (bm = 1: neither a padded block nor bf16's VNNI pairs interleave anything)
//   and each column of B is contiguous along K in every map, so the kernel
//   reads both along K as dot products, four columns of B at a time (bf16 on
//   AVX512-BF16: pairs of K multiplied by VDPBF16PS, single_row.cpp). Two
//   rows (m = 2, fp32 and fp64) take its two-row form: blocks of two rows
//   hold them interleaved along K (lda 2), and each vector pair of A splits
//   into one vector per row; LIBXSMM ran such tiles slower still than one
//   row (a row-major N of 2).
// - Narrow (n <= narrow_columns(), A read in place): a plan with one column of
//   tiles reads each A block once, so a plain call's A need not be packed
//   (plan_impl.hpp, all_in_place_map). fp32 and fp64 read it in place with
//   LIBXSMM's kernels; bf16's need A in VNNI pairs, so bf16 takes this kernel,
//   which walks A four whole columns at a time, widening bf16 to fp32, adding
//   them into the tile of C (bm x n accumulators: 32 KiB at bm 1024, n 8).
//   It beat packed panels for bf16 and lost to LIBXSMM in place on fp32 from
//   two columns on (docs/experiments/2026-12-07-figures-from-code-comments.md#narrow-kernel-widening-bf16).
//   On AVX512-BF16 bf16 multiplies pairs of K with VDPBF16PS instead (narrow.cpp).
//
// Both are written once on GCC/Clang vector extensions and compiled for
// AVX-512, AVX2 + FMA and the x86-64 baseline; the plan takes the widest the
// CPU runs. bf16 on a CPU with AVX512-BF16 takes a second body of each,
// written on intrinsics (VDPBF16PS has no vector-extension spelling), where
// pairs of K are multiplied without widening; its sums differ from the
// widening bodies' in the last bits (and a denormal input reads as zero).
// In: float, double or libxsmm_bfloat16 (plain, not VNNI pairs);
// Out: the accumulator (float for bf16). Private to core/.
#pragma once
#include <libxsmm.h>

#include <cstdint>

#include "sfc/gemm.hpp"

namespace sfc {

inline constexpr int kNarrowColumns = 8;
// The widest tile the narrow kernel runs for bf16 on AVX512-BF16 (pairs of
// K, narrow.cpp): there it beats packing A for LIBXSMM up to 12 columns, not
// at 16 (docs/experiments/2026-12-07-figures-from-code-comments.md#narrow-bf16-pair-columns).
inline constexpr int kNarrowPairColumns = 12;
// The widest tile the narrow kernel takes for `In` on this CPU.
template <class In>
int narrow_columns();
// Whether one column of tiles `columns` wide can read a plain A of `dtype`
// in place (plan_impl.hpp, Impl::all_in_place_map): fp32 and fp64 on
// LIBXSMM's kernels, bf16 only on the narrow kernel (LIBXSMM's need A in VNNI
// pairs); elsewhere the loop packs A panel by panel.
inline bool one_column_reads_a_in_place(DType dtype, std::int64_t columns) {
  return dtype != DType::bf16 || columns <= narrow_columns<libxsmm_bfloat16>();
}

template <class Input, class Output>
struct SimdKernel {
  using In = Input;
  using Out = Output;
  int m = 0, n = 0, bk = 0;
  std::int64_t stride_a = 0, stride_b = 0;  // elements between a batch's consecutive blocks
  std::int64_t lda = 0, ldb = 0, ldc = 0;   // elements between columns
  bool accumulate = false;                  // C += ... rather than C = ...
  void (*run)(const SimdKernel&, const In*, const In*, Out*, unsigned long long) = nullptr;

  explicit operator bool() const { return run != nullptr; }
  void operator()(const In* a, const In* b, Out* c, const unsigned long long* count) const {
    run(*this, a, b, c, *count);
  }
};

// `k` with the single-row kernel set (k.m must be 1, A contiguous along K;
// fp32 and fp64 also k.lda 2: k.m 1 or 2 rows of A interleaved along K).
template <class In, class Out>
SimdKernel<In, Out> single_row_kernel(SimdKernel<In, Out> k);
// `k` with the narrow kernel set (1 <= k.n <= narrow_columns<In>(), A plain).
template <class In, class Out>
SimdKernel<In, Out> narrow_kernel(SimdKernel<In, Out> k);

}  // namespace sfc
