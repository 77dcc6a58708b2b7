// The AMX bf16 batch-reduce kernel (see amx_brgemm.hpp).
#include "amx_brgemm.hpp"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sfc/arch_context.hpp"
#include "sfc/settings.hpp"

namespace sfc {
namespace {

// Linux's permission request for the tile data state (arch/x86/include/uapi/asm/prctl.h).
constexpr long kArchReqXcompPerm = 0x1023;
constexpr long kXfeatureXtiledata = 18;

// cpuid and XCR0 only: no system call, no change to the process.
bool cpu_and_os_have_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = edx & (1u << 22), amx_tile = edx & (1u << 24);
  if (!amx_bf16 || !amx_tile) return false;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & (3u << 17)) == (3u << 17);  // XTILECFG and XTILEDATA enabled by the OS
}

// SFC_AMX=0 switches the tiles off; 1, unset or a bad value (named once)
// leaves them on. Read at each plan build: tests switch it at run time.
bool switched_off() {
  const auto choice = sfc::setting_choice("SFC_AMX", {"0", "1"});
  return choice && *choice == "0";
}

// The largest even divisor of k up to 32: the K of one tile product (a tile
// row holds 32 bf16). Blocks of a multiple of 32 use full tiles.
int k_step_for(int k) {
  for (int step = 32; step >= 2; step -= 2)
    if (k % step == 0) return step;
  return 2;  // unreachable for an even k
}

// Tiles: C 0 (n half 0, m half 0), 1 (n0, m1), 2 (n1, m0), 3 (n1, m1);
// our B (the unit's A) 4 (n0), 5 (n1); our A (the unit's B) 6 (m0), 7 (m1).
template <int MT, int NT>
__attribute__((target("amx-tile,amx-bf16"))) void multiply_block(const libxsmm_bfloat16* a,
                                                                 const libxsmm_bfloat16* b, float* c,
                                                                 unsigned long long count, int k, int k_step,
                                                                 std::int64_t stride_a, std::int64_t stride_b,
                                                                 std::int64_t lda, std::int64_t ldb,
                                                                 std::int64_t ldc, bool accumulate) {
  const long c_stride = long(ldc * 4), b_stride = long(ldb * 2), a_stride = long(lda * 4);
  float* c1 = c + 16 * ldc;  // the second 16 columns
  if (accumulate) {
    _tile_loadd(0, c, c_stride);
    if constexpr (MT > 1) _tile_loadd(1, c + 16, c_stride);
    if constexpr (NT > 1) _tile_loadd(2, c1, c_stride);
    if constexpr (MT > 1 && NT > 1) _tile_loadd(3, c1 + 16, c_stride);
  } else {
    _tile_zero(0);
    if constexpr (MT > 1) _tile_zero(1);
    if constexpr (NT > 1) _tile_zero(2);
    if constexpr (MT > 1 && NT > 1) _tile_zero(3);
  }
  for (unsigned long long i = 0; i < count; ++i) {
    const libxsmm_bfloat16* ai = a + std::int64_t(i) * stride_a;
    const libxsmm_bfloat16* bi = b + std::int64_t(i) * stride_b;
    for (int kk = 0; kk < k; kk += k_step) {
      const libxsmm_bfloat16* ak = ai + (kk / 2) * lda * 2;  // pair kk / 2 of rows m0..
      _tile_loadd(4, bi + kk, b_stride);
      if constexpr (NT > 1) _tile_loadd(5, bi + 16 * ldb + kk, b_stride);
      _tile_loadd(6, ak, a_stride);
      if constexpr (MT > 1) _tile_loadd(7, ak + 32, a_stride);  // 16 rows on: 32 bf16
      _tile_dpbf16ps(0, 4, 6);
      if constexpr (MT > 1) _tile_dpbf16ps(1, 4, 7);
      if constexpr (NT > 1) _tile_dpbf16ps(2, 5, 6);
      if constexpr (MT > 1 && NT > 1) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, c, c_stride);
  if constexpr (MT > 1) _tile_stored(1, c + 16, c_stride);
  if constexpr (NT > 1) _tile_stored(2, c1, c_stride);
  if constexpr (MT > 1 && NT > 1) _tile_stored(3, c1 + 16, c_stride);
}

__attribute__((target("amx-tile"))) void load_config(const AmxBrgemm::TileConfig& config) {
  _tile_loadconfig(&config);
}

__attribute__((target("amx-tile"))) void release_tiles() { _tile_release(); }

}  // namespace

bool amx_available() {
  static const bool present = cpu_and_os_have_amx();
  const bool off = switched_off();  // read (and a junk value named) on every CPU
  return present && !off;
}

bool amx_bf16_usable() {
  static const bool granted =
      cpu_and_os_have_amx() && syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  return granted;
}

bool amx_enabled() {
  // Only a plan asks Linux for the tile state, once per process (the
  // permission covers every thread, those to come too, and enlarges every
  // signal frame of the process): the block rule, which the predictor and
  // libsfcconf run as well, reads cpuid alone (amx_available).
  return amx_available() && amx_bf16_usable();
}

AmxBrgemm::AmxBrgemm(int m, int n, int k, std::int64_t stride_a, std::int64_t stride_b, std::int64_t lda,
                     std::int64_t ldb, std::int64_t ldc, bool accumulate)
    : k_(k),
      k_step_(k_step_for(k)),
      stride_a_(stride_a),
      stride_b_(stride_b),
      lda_(lda),
      ldb_(ldb),
      ldc_(ldc),
      accumulate_(accumulate) {
  // One configuration per distinct register-block shape (at most four: the
  // interior, the last rows, the last columns, the corner), found in order.
  auto config_for = [&](int rows0, int rows1, int cols0, int cols1) {
    TileConfig t;
    const int m_width[2] = {rows0, rows1}, n_height[2] = {cols0, cols1};
    for (int nh = 0; nh < 2; ++nh)
      for (int mh = 0; mh < 2; ++mh) {
        const int tile = 2 * nh + mh;
        if (m_width[mh] && n_height[nh]) {
          t.rows[tile] = std::uint8_t(n_height[nh]);
          t.colsb[tile] = std::uint16_t(m_width[mh] * 4);
        }
      }
    for (int nh = 0; nh < 2; ++nh)
      if (n_height[nh]) {
        t.rows[4 + nh] = std::uint8_t(n_height[nh]);
        t.colsb[4 + nh] = std::uint16_t(k_step_ * 2);
      }
    for (int mh = 0; mh < 2; ++mh)
      if (m_width[mh]) {
        t.rows[6 + mh] = std::uint8_t(k_step_ / 2);
        t.colsb[6 + mh] = std::uint16_t(m_width[mh] * 4);
      }
    for (std::size_t i = 0; i < configs_.size(); ++i)
      if (std::memcmp(&configs_[i], &t, sizeof t) == 0) return int(i);
    configs_.push_back(t);
    return int(configs_.size() - 1);
  };
  for (int n0 = 0; n0 < n; n0 += 32)
    for (int m0 = 0; m0 < m; m0 += 32) {
      const int rows = std::min(32, m - m0), cols = std::min(32, n - n0);
      const int rows0 = std::min(16, rows), rows1 = rows - rows0;
      const int cols0 = std::min(16, cols), cols1 = cols - cols0;
      blocks_.push_back({m0, n0, rows1 ? 2 : 1, cols1 ? 2 : 1, config_for(rows0, rows1, cols0, cols1)});
    }
  // Blocks of one shape together: a call loads each configuration once (a
  // ragged bm such as 63 alternates two shapes down every column).
  std::stable_sort(blocks_.begin(), blocks_.end(),
                   [](const RegisterBlock& x, const RegisterBlock& y) { return x.config < y.config; });
}

void AmxBrgemm::operator()(const libxsmm_bfloat16* a, const libxsmm_bfloat16* b, float* c,
                           unsigned long long count) const {
  int loaded = -1;
  for (const RegisterBlock& rb : blocks_) {
    if (rb.config != loaded) load_config(configs_[std::size_t(loaded = rb.config)]);
    const libxsmm_bfloat16* a0 = a + std::int64_t(rb.m0) * 2;  // VNNI: row r of a pair at 2 r
    const libxsmm_bfloat16* b0 = b + rb.n0 * ldb_;
    float* c0 = c + rb.n0 * ldc_ + rb.m0;
    const auto run = rb.m_tiles == 2 ? (rb.n_tiles == 2 ? multiply_block<2, 2> : multiply_block<2, 1>)
                                     : (rb.n_tiles == 2 ? multiply_block<1, 2> : multiply_block<1, 1>);
    run(a0, b0, c0, count, k_, k_step_, stride_a_, stride_b_, lda_, ldb_, ldc_, accumulate_);
  }
  release_tiles();
}

}  // namespace sfc
