// The narrow kernel (simd_kernel.hpp): C(m x n), n <= narrow_columns(), from A
// read a few whole columns at a time.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "simd.hpp"

namespace sfc {
namespace {

using simd::kLanes;
using simd::load;
using simd::store;
using simd::Vec;
using simd::widen;

// C(:, 0..N) += A(:, kk..kk+G) B(kk..kk+G, 0..N) for one block: G columns of
// A streamed down once, each vector of them added into all N columns of C.
template <int N, int G, class In, class Out>
[[gnu::always_inline]] inline void step(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c) {
  constexpr int L = kLanes<Out>;
  Out w[G][N];
  for (int g = 0; g < G; ++g)
    for (int j = 0; j < N; ++j) w[g][j] = widen<In, Out>(b[j * k.ldb + g]);
  int r = 0;
  for (; r + L <= k.m; r += L) {
    Vec<Out> va[G];
    for (int g = 0; g < G; ++g) load<In, Out>(va[g], a + g * k.lda + r);
    for (int j = 0; j < N; ++j) {
      Out* cj = c + j * k.ldc + r;
      Vec<Out> acc;
      load<Out, Out>(acc, cj);
      for (int g = 0; g < G; ++g) acc += va[g] * w[g][j];
      store<Out>(cj, acc);
    }
  }
  for (; r < k.m; ++r)
    for (int j = 0; j < N; ++j) {
      Out sum = c[j * k.ldc + r];
      for (int g = 0; g < G; ++g) sum += widen<In, Out>(a[g * k.lda + r]) * w[g][j];
      c[j * k.ldc + r] = sum;
    }
}

template <int N, class In, class Out>
[[gnu::always_inline]] inline void narrow(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                          unsigned long long count) {
  constexpr int G = 4;  // columns of A per pass: C is read and written once per G
  if (!k.accumulate)
    for (int j = 0; j < N; ++j) std::fill_n(c + j * k.ldc, k.m, Out(0));
  for (unsigned long long i = 0; i < count; ++i) {
    const In* ai = a + std::int64_t(i) * k.stride_a;
    const In* bi = b + std::int64_t(i) * k.stride_b;
    int kk = 0;
    for (; kk + G <= k.bk; kk += G) step<N, G>(k, ai + kk * k.lda, bi + kk, c);
    for (; kk < k.bk; ++kk) step<N, 1>(k, ai + kk * k.lda, bi + kk, c);
  }
}

template <class In, class Out, int... N>
simd::Body<In, Out> narrow_for(int n, std::integer_sequence<int, N...>) {
  simd::Body<In, Out> body = nullptr;
  ((n == N + 1 ? body = simd::widest<In, Out, narrow<N + 1, In, Out>>() : body), ...);
  return body;
}

// bf16 on AVX512-BF16: VDPBF16PS adds the products of a pair of K into
// one fp32 lane, where step() widens every element of A to fp32 first. A's
// pairs lie in two columns a leading dimension apart, so each pass loads 32
// rows of two columns and interleaves them (VPUNPCKLWD / VPUNPCKHWD, within
// 128-bit lanes): the low half holds the pairs of rows {0-3, 8-11, 16-19,
// 24-27}, the high half the others, and C's 32 rows are permuted into that
// order on loading and back on storing. B's pair (K = kk, kk + 1) of each
// column is one 32-bit word broadcast. An odd K left over takes step().
// Masked stores only on the last group of rows, and no scalar tail: both lost
// (docs/experiments/2026-12-02-thin-policy-bf16-pairs-zen5.md; figures:
// docs/experiments/2026-12-07-figures-from-code-comments.md#bf16-pairs-on-vdpbf16ps).
using Bf16 = libxsmm_bfloat16;

// Rows [r, r + 32) of C (`rows`: those below M, under masks if `Masked`;
// masked stores are slow on AMD's cores, so only the last group takes them)
// += their A pairs (low, high) times B's pair words w.
template <int N, int P, bool Masked>
[[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline void pair_rows(
    const SimdKernel<Bf16, float>& k, const Bf16* a, const __m512i (&w)[P][N], float* c, int r,
    __mmask32 rows) {
  const __m512i to_low = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
  const __m512i to_high = _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  const __m512i back_first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i back_second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  const __mmask16 first = __mmask16(rows), second = __mmask16(rows >> 16);
  __m512bh low[P], high[P];
  for (int p = 0; p < P; ++p) {
    const Bf16* a0 = a + 2 * p * k.lda + r;
    const __m512i x0 = Masked ? _mm512_maskz_loadu_epi16(rows, a0) : _mm512_loadu_si512(a0);
    const __m512i x1 = Masked ? _mm512_maskz_loadu_epi16(rows, a0 + k.lda) : _mm512_loadu_si512(a0 + k.lda);
    low[p] = (__m512bh)_mm512_unpacklo_epi16(x0, x1);
    high[p] = (__m512bh)_mm512_unpackhi_epi16(x0, x1);
  }
  for (int j = 0; j < N; ++j) {
    float* cj = c + j * k.ldc + r;
    const __m512 c0 = Masked ? _mm512_maskz_loadu_ps(first, cj) : _mm512_loadu_ps(cj);
    const __m512 c1 = Masked ? _mm512_maskz_loadu_ps(second, cj + 16) : _mm512_loadu_ps(cj + 16);
    __m512 acc_low = _mm512_permutex2var_ps(c0, to_low, c1),
           acc_high = _mm512_permutex2var_ps(c0, to_high, c1);
    for (int p = 0; p < P; ++p) {
      acc_low = _mm512_dpbf16_ps(acc_low, low[p], (__m512bh)w[p][j]);
      acc_high = _mm512_dpbf16_ps(acc_high, high[p], (__m512bh)w[p][j]);
    }
    const __m512 out0 = _mm512_permutex2var_ps(acc_low, back_first, acc_high);
    const __m512 out1 = _mm512_permutex2var_ps(acc_low, back_second, acc_high);
    if constexpr (Masked) {
      _mm512_mask_storeu_ps(cj, first, out0);
      _mm512_mask_storeu_ps(cj + 16, second, out1);
    } else {
      _mm512_storeu_ps(cj, out0);
      _mm512_storeu_ps(cj + 16, out1);
    }
  }
}

template <int N, int P>  // P pairs of K per pass
[[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline void pair_step(
    const SimdKernel<Bf16, float>& k, const Bf16* a, const Bf16* b, float* c) {
  __m512i w[P][N];
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < N; ++j) {
      const std::uint32_t first = b[j * k.ldb + 2 * p], second = b[j * k.ldb + 2 * p + 1];
      w[p][j] = _mm512_set1_epi32(int(first | second << 16));
    }
  int r = 0;
  for (; r + 32 <= k.m; r += 32) pair_rows<N, P, false>(k, a, w, c, r, ~__mmask32(0));
  if (r < k.m) pair_rows<N, P, true>(k, a, w, c, r, (__mmask32(1) << (k.m - r)) - 1);
}

template <int N>
[[gnu::target("avx512f,avx512bw,avx512bf16")]] void narrow_pairs(const SimdKernel<Bf16, float>& k,
                                                                 const Bf16* a, const Bf16* b, float* c,
                                                                 unsigned long long count) {
  constexpr int P = 4;  // pairs of K per pass: C is read and written once per 8 columns of A
  if (!k.accumulate)
    for (int j = 0; j < N; ++j) std::fill_n(c + j * k.ldc, k.m, 0.0f);
  for (unsigned long long i = 0; i < count; ++i) {
    const Bf16* ai = a + std::int64_t(i) * k.stride_a;
    const Bf16* bi = b + std::int64_t(i) * k.stride_b;
    int kk = 0;
    for (; kk + 2 * P <= k.bk; kk += 2 * P) pair_step<N, P>(k, ai + kk * k.lda, bi + kk, c);
    if (kk + 4 <= k.bk) {  // what is left in one pass each: C is read and written per pass
      pair_step<N, 2>(k, ai + kk * k.lda, bi + kk, c);
      kk += 4;
    }
    if (kk + 2 <= k.bk) {
      pair_step<N, 1>(k, ai + kk * k.lda, bi + kk, c);
      kk += 2;
    }
    if (kk < k.bk) step<N, 1>(k, ai + kk * k.lda, bi + kk, c);
  }
}

template <int... N>
simd::Body<Bf16, float> pairs_for(int n, std::integer_sequence<int, N...>) {
  simd::Body<Bf16, float> body = nullptr;
  ((n == N + 1 ? body = narrow_pairs<N + 1> : body), ...);
  return body;
}

}  // namespace

template <class In>
int narrow_columns() {
  if constexpr (std::is_same_v<In, Bf16>)
    if (simd::has_bf16_pairs()) return kNarrowPairColumns;
  return kNarrowColumns;
}

template <class In, class Out>
SimdKernel<In, Out> narrow_kernel(SimdKernel<In, Out> k) {
  k.run = narrow_for<In, Out>(k.n, std::make_integer_sequence<int, kNarrowColumns>{});
  if constexpr (std::is_same_v<In, Bf16>)
    if (simd::has_bf16_pairs()) k.run = pairs_for(k.n, std::make_integer_sequence<int, kNarrowPairColumns>{});
  return k;
}

template int narrow_columns<float>();
template int narrow_columns<double>();
template int narrow_columns<libxsmm_bfloat16>();

template SimdKernel<float, float> narrow_kernel(SimdKernel<float, float>);
template SimdKernel<double, double> narrow_kernel(SimdKernel<double, double>);
template SimdKernel<libxsmm_bfloat16, float> narrow_kernel(SimdKernel<libxsmm_bfloat16, float>);

}  // namespace sfc
