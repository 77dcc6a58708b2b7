// The single-row kernel (simd_kernel.hpp): C(1 x n) as dot products along K.
#include <algorithm>

#include "simd.hpp"

namespace sfc {
namespace {

using simd::kLanes;
using simd::load;
using simd::Vec;
using simd::widen;

// Columns [j, j + kCols) of C: every block of the batch read once, along K,
// into kCols vector accumulators.
template <int kCols, class In, class Out>
[[gnu::always_inline]] inline void columns(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                           unsigned long long count, int j) {
  constexpr int L = kLanes<Out>;
  Vec<Out> acc[kCols] = {};
  Out rest[kCols] = {};
  for (unsigned long long i = 0; i < count; ++i) {
    const In* ai = a + std::int64_t(i) * k.stride_a;
    const In* bi = b + std::int64_t(i) * k.stride_b + std::int64_t(j) * k.ldb;
    int kk = 0;
    for (; kk + L <= k.bk; kk += L) {
      Vec<Out> va, vb;
      load<In, Out>(va, ai + kk);
      for (int col = 0; col < kCols; ++col) {
        load<In, Out>(vb, bi + col * k.ldb + kk);
        acc[col] += va * vb;
      }
    }
    for (; kk < k.bk; ++kk)
      for (int col = 0; col < kCols; ++col)
        rest[col] += widen<In, Out>(ai[kk]) * widen<In, Out>(bi[col * k.ldb + kk]);
  }
  for (int col = 0; col < kCols; ++col) {
    Out sum = rest[col];
    for (int lane = 0; lane < L; ++lane) sum += acc[col][lane];
    Out& out = c[std::int64_t(j + col) * k.ldc];
    out = k.accumulate ? out + sum : sum;
  }
}

template <class In, class Out>
[[gnu::always_inline]] inline void single_row(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                              unsigned long long count) {
  constexpr int kCols = 4;
  int j = 0;
  for (; j + kCols <= k.n; j += kCols) columns<kCols>(k, a, b, c, count, j);
  for (; j < k.n; ++j) columns<1>(k, a, b, c, count, j);
}

}  // namespace

template <class In, class Out>
SimdKernel<In, Out> single_row_kernel(SimdKernel<In, Out> k) {
  k.run = simd::widest<In, Out, single_row<In, Out>>();
  return k;
}

template SimdKernel<float, float> single_row_kernel(SimdKernel<float, float>);
template SimdKernel<double, double> single_row_kernel(SimdKernel<double, double>);
template SimdKernel<libxsmm_bfloat16, float> single_row_kernel(SimdKernel<libxsmm_bfloat16, float>);

}  // namespace sfc
