// The narrow kernel (simd_kernel.hpp): C(m x n), n <= kNarrowColumns, from A
// read a few whole columns at a time.
#include <algorithm>
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

}  // namespace

template <class In, class Out>
SimdKernel<In, Out> narrow_kernel(SimdKernel<In, Out> k) {
  k.run = narrow_for<In, Out>(k.n, std::make_integer_sequence<int, kNarrowColumns>{});
  return k;
}

template SimdKernel<float, float> narrow_kernel(SimdKernel<float, float>);
template SimdKernel<double, double> narrow_kernel(SimdKernel<double, double>);
template SimdKernel<libxsmm_bfloat16, float> narrow_kernel(SimdKernel<libxsmm_bfloat16, float>);

}  // namespace sfc
