// Vector helpers for the kernels of simd_kernel.hpp: 64-byte vectors of the
// accumulator type, loads that widen bf16, and one body compiled for three
// instruction sets. Private to core/.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "simd_kernel.hpp"

namespace sfc::simd {

// 64 bytes of Out: one zmm with AVX-512, two ymm with AVX2, four xmm on the baseline.
template <class Out>
using Vec [[gnu::vector_size(64)]] = Out;
template <class Out>
inline constexpr int kLanes = int(64 / sizeof(Out));

// kLanes<Out> inputs from `p` (unaligned), widened to Out. (Vectors go by
// reference: a 64-byte vector returned by value warns of an ABI change.)
template <class In, class Out>
[[gnu::always_inline]] inline void load(Vec<Out>& v, const In* p) {
  if constexpr (std::is_same_v<In, Out>) {
    std::memcpy(&v, p, sizeof v);
  } else {  // bf16 -> fp32: the bf16 bits are the high half of the float's
    using Half [[gnu::vector_size(32)]] = std::uint16_t;
    using Word [[gnu::vector_size(64)]] = std::uint32_t;
    Half h;
    std::memcpy(&h, p, sizeof h);
    const Word w = __builtin_convertvector(h, Word) << 16;
    std::memcpy(&v, &w, sizeof v);
  }
}

template <class Out>
[[gnu::always_inline]] inline void store(Out* p, const Vec<Out>& v) {
  std::memcpy(p, &v, sizeof v);
}

template <class In, class Out>
[[gnu::always_inline]] inline Out widen(In x) {
  if constexpr (std::is_same_v<In, Out>) {
    return x;
  } else {
    const std::uint32_t bits = std::uint32_t(x) << 16;
    Out f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
}

template <class In, class Out>
using Body = void (*)(const SimdKernel<In, Out>&, const In*, const In*, Out*, unsigned long long);

// `body` (an always-inline function) compiled for each instruction set.
template <class In, class Out, Body<In, Out> body>
[[gnu::target("avx512f,avx512bw,avx512vl,fma")]] void on_avx512(const SimdKernel<In, Out>& k, const In* a,
                                                                const In* b, Out* c,
                                                                unsigned long long count) {
  body(k, a, b, c, count);
}
template <class In, class Out, Body<In, Out> body>
[[gnu::target("avx2,fma")]] void on_avx2(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c,
                                         unsigned long long count) {
  body(k, a, b, c, count);
}
template <class In, class Out, Body<In, Out> body>
void on_baseline(const SimdKernel<In, Out>& k, const In* a, const In* b, Out* c, unsigned long long count) {
  body(k, a, b, c, count);
}

// Whether this CPU runs the AVX-512 bodies (on_avx512: F, BW and VL).
inline bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

// Whether this CPU multiplies bf16 pairs (VDPBF16PS, AVX512-BF16): the
// single-row and narrow kernels then take their bodies on pairs of K.
inline bool has_bf16_pairs() { return __builtin_cpu_supports("avx512bf16"); }

// The compilation of `body` for the widest instruction set this CPU runs.
template <class In, class Out, Body<In, Out> body>
Body<In, Out> widest() {
  // (__builtin_cpu_init is not needed: the runtime's constructor ran before any plan is built.)
  if (has_avx512()) return on_avx512<In, Out, body>;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return on_avx2<In, Out, body>;
  return on_baseline<In, Out, body>;
}

}  // namespace sfc::simd
