// A register-only FMA loop per ISA, chosen at run time, and one of AMX tile
// products: the bundle's binary is built without -march=native
// (bench-bundle.sh), so each loop carries its own target attribute instead of
// relying on the compiler's flags.
#include "sfc/fma_peak.hpp"

#include <immintrin.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "sfc/arch_context.hpp"
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

// Four independent C tiles, each fed by its own pair of operand tiles held
// in registers: TDPBF16PS's latency is several of its issue intervals, and
// four chains keep the unit busy. Tiles: C 0-3, A 4-5, B 6-7, all 16 rows of
// 64 bytes (16 x 32 bf16 in, 16 x 16 fp32 out).
__attribute__((target("amx-tile,amx-bf16"))) double tile_loop(long iterations, float& sink) {
  struct alignas(64) TileConfig {
    std::uint8_t palette = 1, start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
  } config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  alignas(64) std::uint16_t operand[16 * 32];
  std::fill(std::begin(operand), std::end(operand), std::uint16_t(0x3a83));  // bf16 1e-3: sums stay finite
  alignas(64) float result[16 * 16];
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (long it = 0; it < iterations; ++it) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  float sum = 0;
  _tile_stored(0, result, 64);
  for (float v : result) sum += v;
  _tile_stored(3, result, 64);
  for (float v : result) sum += v;
  _tile_release();
  sink = sum;
  return double(iterations) * 4 * (16 * 16 * 32 * 2);
}

// The team's rate: every thread's flops over the wall time from the first
// thread's start to the last one's end, best of kRepetitions. A per-thread CPU
// clock would hide oversubscription (16 threads on 2 cores would read as 16
// cores). 0 if the loop's result is not a number (it did not run as written).
double team_gflops(int threads, double (*loop)(long, float&), long iterations) {
  threads = std::max(threads, 1);
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
  // The accumulators stay finite; a NaN would mean the loop did not run as written.
  for (float s : sinks) ran = ran && s == s;
  return ran ? best / 1e9 : 0;
}

}  // namespace

double fma_peak_gflops(int threads) {
  // Tens of milliseconds a run on an AVX-512 core
  if (__builtin_cpu_supports("avx512f")) return team_gflops(threads, fma_loop_avx512, 20'000'000);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return team_gflops(threads, fma_loop_avx2, 30'000'000);
  return 0;
}

double tile_peak_gflops(int threads) {
  // Tens of milliseconds a run on a Sapphire Rapids core's tile unit
  return amx_bf16_usable() ? team_gflops(threads, tile_loop, 500'000) : 0;
}

}  // namespace sfc
