// The single-row kernel (simd_kernel.hpp): C(1 x n) -- or, in fp32 and fp64,
// C(2 x n) -- as dot products along K.
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "simd.hpp"

namespace sfc {
namespace {

using simd::kLanes;
using simd::load;
using simd::Vec;
using simd::widen;

// The even and odd lanes of lo:hi: a block of two rows (lda 2) holds them
// interleaved along K, so 2 x kLanes elements become a vector of each row.
template <class Out>
[[gnu::always_inline]] inline void deinterleave(const Vec<Out>& lo, const Vec<Out>& hi, Vec<Out>& even,
                                                Vec<Out>& odd) {
  if constexpr (kLanes<Out> == 16) {
    even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  } else {
    static_assert(kLanes<Out> == 8);
    even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
    odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
  }
}

// Columns [j, j + kCols) of C's kRows rows (the tile's first k.m of them
// written): every block of the batch read once, along K, into kRows x kCols
// vector accumulators. Two rows (fp32 and fp64 only) lie interleaved along K
// (lda 2; a one-row edge tile of such blocks reads its zero padding too).
template <int kRows, int kCols, class In, class Out>
[[gnu::always_inline]] inline void columns(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                           unsigned long long count, int j) {
  static_assert(kRows == 1 || std::is_same_v<In, Out>);
  constexpr int L = kLanes<Out>;
  Vec<Out> acc[kRows][kCols] = {};
  Out rest[kRows][kCols] = {};
  for (unsigned long long i = 0; i < count; ++i) {
    const In* ai = a + std::int64_t(i) * k.stride_a;
    const In* bi = b + std::int64_t(i) * k.stride_b + std::int64_t(j) * k.ldb;
    int kk = 0;
    for (; kk + L <= k.bk; kk += L) {
      Vec<Out> va[kRows], vb;
      if constexpr (kRows == 1) {
        load<In, Out>(va[0], ai + kk);
      } else {
        Vec<Out> lo, hi;
        load<In, Out>(lo, ai + 2 * kk);
        load<In, Out>(hi, ai + 2 * kk + L);
        deinterleave<Out>(lo, hi, va[0], va[1]);
      }
      for (int col = 0; col < kCols; ++col) {
        load<In, Out>(vb, bi + col * k.ldb + kk);
        for (int row = 0; row < kRows; ++row) acc[row][col] += va[row] * vb;
      }
    }
    for (; kk < k.bk; ++kk)
      for (int col = 0; col < kCols; ++col)
        for (int row = 0; row < kRows; ++row)
          rest[row][col] += widen<In, Out>(ai[kk * kRows + row]) * widen<In, Out>(bi[col * k.ldb + kk]);
  }
  for (int col = 0; col < kCols; ++col)
    for (int row = 0; row < k.m; ++row) {
      Out sum = rest[row][col];
      for (int lane = 0; lane < L; ++lane) sum += acc[row][col][lane];
      Out& out = c[std::int64_t(j + col) * k.ldc + row];
      out = k.accumulate ? out + sum : sum;
    }
}

template <int kRows, class In, class Out>
[[gnu::always_inline]] inline void few_rows(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                            unsigned long long count) {
  constexpr int kCols = 4 / kRows;  // 4 vector accumulators: AVX2 holds them in 8 of its 16 registers
  int j = 0;
  for (; j + kCols <= k.n; j += kCols) columns<kRows, kCols>(k, a, b, c, count, j);
  for (; j < k.n; ++j) columns<kRows, 1>(k, a, b, c, count, j);
}

template <class In, class Out>
[[gnu::always_inline]] inline void single_row(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                              unsigned long long count) {
  few_rows<1>(k, a, b, c, count);
}

template <class In, class Out>
[[gnu::always_inline]] inline void two_rows(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                            unsigned long long count) {
  few_rows<2>(k, a, b, c, count);
}

// bf16 on AVX512-BF16: VDPBF16PS multiplies 32 bf16 pairs and adds each
// pair's sum into one of 16 fp32 lanes, where the body above widens 16
// elements of each operand to fp32 with two instructions before its FMA.
// Along K both operands are contiguous, so neighbouring elements are a pair
// of each. Two accumulators per column (even and odd 32-element steps) keep
// two chains of the instruction's latency in flight; a block's last, partial
// vector is read under a mask (zeros add nothing). The instruction treats
// denormal inputs as zero and rounds differently from the widening body, so
// sums differ from it in the last bits. One accumulator per column, or one
// column at a time, ran slower
// (docs/experiments/2026-12-02-thin-policy-bf16-pairs-zen5.md; figures:
// docs/experiments/2026-12-07-figures-from-code-comments.md#single-row-on-vdpbf16ps).
using Bf16 = libxsmm_bfloat16;

template <int kCols>
[[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline void pair_columns(
    const SimdKernel<Bf16, float>& k, const Bf16* a, const Bf16* b, float* c, unsigned long long count,
    int j) {
  __m512 acc[kCols], acc2[kCols];
  for (int col = 0; col < kCols; ++col) acc[col] = acc2[col] = _mm512_setzero_ps();
  for (unsigned long long i = 0; i < count; ++i) {
    const Bf16* ai = a + std::int64_t(i) * k.stride_a;
    const Bf16* bi = b + std::int64_t(i) * k.stride_b + std::int64_t(j) * k.ldb;
    int kk = 0;
    for (; kk + 64 <= k.bk; kk += 64) {
      const __m512bh va = (__m512bh)_mm512_loadu_si512(ai + kk);
      const __m512bh va2 = (__m512bh)_mm512_loadu_si512(ai + kk + 32);
      for (int col = 0; col < kCols; ++col) {
        acc[col] = _mm512_dpbf16_ps(acc[col], va, (__m512bh)_mm512_loadu_si512(bi + col * k.ldb + kk));
        acc2[col] =
            _mm512_dpbf16_ps(acc2[col], va2, (__m512bh)_mm512_loadu_si512(bi + col * k.ldb + kk + 32));
      }
    }
    for (; kk < k.bk; kk += 32) {
      const int left = k.bk - kk;
      const __mmask32 mask = left >= 32 ? ~__mmask32(0) : (__mmask32(1) << left) - 1;
      const __m512bh va = (__m512bh)_mm512_maskz_loadu_epi16(mask, ai + kk);
      for (int col = 0; col < kCols; ++col)
        acc[col] =
            _mm512_dpbf16_ps(acc[col], va, (__m512bh)_mm512_maskz_loadu_epi16(mask, bi + col * k.ldb + kk));
    }
  }
  for (int col = 0; col < kCols; ++col) {
    acc[col] = _mm512_add_ps(acc[col], acc2[col]);
    alignas(64) float lanes[16];  // (not _mm512_reduce_add_ps: GCC 12's header warns of uninitialised use)
    _mm512_store_ps(lanes, acc[col]);
    float sum = 0;
    for (const float lane : lanes) sum += lane;
    float& out = c[std::int64_t(j + col) * k.ldc];
    out = k.accumulate ? out + sum : sum;
  }
}

[[gnu::target("avx512f,avx512bw,avx512bf16")]] void single_row_pairs(const SimdKernel<Bf16, float>& k,
                                                                     const Bf16* a, const Bf16* b, float* c,
                                                                     unsigned long long count) {
  constexpr int kCols = 4;
  int j = 0;
  for (; j + kCols <= k.n; j += kCols) pair_columns<kCols>(k, a, b, c, count, j);
  for (; j < k.n; ++j) pair_columns<1>(k, a, b, c, count, j);
}

}  // namespace

template <class In, class Out>
SimdKernel<In, Out> single_row_kernel(SimdKernel<In, Out> k) {
  if constexpr (std::is_same_v<In, Out>) {
    if (k.lda == 2) {
      k.run = simd::widest<In, Out, two_rows<In, Out>>();
      return k;
    }
  }
  k.run = simd::widest<In, Out, single_row<In, Out>>();
  if constexpr (std::is_same_v<In, Bf16>)
    if (simd::has_bf16_pairs()) k.run = single_row_pairs;
  return k;
}

template SimdKernel<float, float> single_row_kernel(SimdKernel<float, float>);
template SimdKernel<double, double> single_row_kernel(SimdKernel<double, double>);
template SimdKernel<libxsmm_bfloat16, float> single_row_kernel(SimdKernel<libxsmm_bfloat16, float>);

}  // namespace sfc
