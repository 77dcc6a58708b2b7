// A register-only FMA loop per ISA, chosen at run time: the bundle's binary is
// built without -march=native (bench-bundle.sh), so each loop carries its own
// target attribute instead of relying on the compiler's flags.
#include "sfc/fma_peak.hpp"

#include <immintrin.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "sfc/clocks.hpp"

namespace sfc {
namespace {

// Best of several short runs: on a shared machine any run can lose a core to
// another process for a while.
constexpr int kRepetitions = 5;

// Independent accumulators: an FMA's latency (4 cycles) times the FMA pipes
// (2) is 8 chains in flight; more hide scheduling slack. 16 zmm (AVX-512) or
// 12 ymm (AVX2, 16 registers) leave room for the two shared operands.
// Returns the flops done; the accumulators' sum goes to `sink` so that the
// loop cannot be optimised away.
__attribute__((target("avx512f"))) double fma_loop_avx512(long iterations, float& sink) {
  constexpr int chains = 16;
  __m512 acc[chains];
  for (int i = 0; i < chains; ++i) acc[i] = _mm512_set1_ps(1e-3f * float(i));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < chains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], scale, shift);
  }
  alignas(64) float lanes[16];
  float sum = 0;
  for (int i = 0; i < chains; ++i) {
    _mm512_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  sink = sum;
  return double(iterations) * chains * 16 * 2;
}

__attribute__((target("avx2,fma"))) double fma_loop_avx2(long iterations, float& sink) {
  constexpr int chains = 12;
  __m256 acc[chains];
  for (int i = 0; i < chains; ++i) acc[i] = _mm256_set1_ps(1e-3f * float(i));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < chains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, shift);
  }
  alignas(32) float lanes[8];
  float sum = 0;
  for (int i = 0; i < chains; ++i) {
    _mm256_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  sink = sum;
  return double(iterations) * chains * 8 * 2;
}

}  // namespace

double fma_peak_gflops(int threads) {
  threads = std::max(threads, 1);
  double (*loop)(long, float&) = nullptr;
  long iterations = 0;  // ~10 GFLOP a run with AVX-512, ~50 ms at 200 GFLOP/s
  if (__builtin_cpu_supports("avx512f")) {
    loop = fma_loop_avx512;
    iterations = 20'000'000;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    loop = fma_loop_avx2;
    iterations = 30'000'000;
  } else {
    return 0;
  }
  // The team's rate: every thread's flops over the wall time from the first
  // thread's start to the last one's end. A per-thread CPU clock
  // would hide oversubscription (16 threads on 2 cores would read as 16 cores).
  double best = 0;
  std::vector<float> sinks(std::size_t(threads), 0.0f);
  std::vector<double> starts(std::size_t(threads), 0.0), ends(std::size_t(threads), 0.0);
  bool ran = true;
#pragma omp parallel num_threads(threads)
  {
    const std::size_t t = std::size_t(omp_get_thread_num());
    double flops = 0;
    for (int rep = 0; rep < kRepetitions; ++rep) {
#pragma omp barrier
      starts[t] = wall_seconds();
      flops = loop(iterations, sinks[t]);
      ends[t] = wall_seconds();
#pragma omp barrier
#pragma omp master
      {
        const int team = omp_get_num_threads();
        const double first = *std::min_element(starts.begin(), starts.begin() + team);
        const double last = *std::max_element(ends.begin(), ends.begin() + team);
        best = std::max(best, flops * team / (last - first));
      }
    }
  }
  // The accumulators converge to ~0.1 and stay finite; a NaN would mean the
  // loop did not run as written.
  for (float s : sinks) ran = ran && s == s;
  return ran ? best / 1e9 : 0;
}

}  // namespace sfc
