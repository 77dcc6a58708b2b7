// A bf16 batch-reduce GEMM on AMX tiles, for CPUs that have them (Intel
// Sapphire Rapids and later). Private to core/.
//
// Why: LIBXSMM 1.17, the version Debian ships, generates no AMX code; its
// bf16 kernels use AVX512-BF16 dot products, which on a Sapphire Rapids core
// reach about a tenth of what the tile unit does, so oneDNN's bf16 GEMM ran
// several times SFC-CA's there (docs/experiments/2026-12-01-amx-bf16-xeon.md). This kernel computes
// exactly what the plan's LIBXSMM bf16 kernel computes, with the same
// operands, strides and leading dimensions, so the SFC-CA loop, the packing
// and the tuning do not change:
//
//   C (m x n, fp32, column-major, ldc)  = or +=  sum_i A_i B_i,
//   A_i: m x k bf16 in VNNI pairs along K (element (r, kk) at
//        ((kk / 2) * lda + r) * 2 + kk % 2), stride_a elements apart;
//   B_i: k x n bf16, column-major (ldb), stride_b elements apart.
//
// The tile unit computes row-major C[r][c] += sum_p A[r][p] B[p][c] with B
// in pairs along p, so the column-major problem maps onto it without any
// copy: a tile row is a column of our C (16 fp32 along M), the tile "A" is
// our B (a row: 32 consecutive K of one column) and the tile "B" is our
// VNNI A (a row: one pair of K for 16 rows of M). Registers: four C tiles
// (2 x 16 columns by 2 x 16 rows of C), two tiles of B and two of A.
#pragma once
#include <libxsmm.h>

#include <cstdint>
#include <vector>

namespace sfc {

// Whether the CPU has AMX-TILE and AMX-BF16, the OS saves their state, and
// SFC_AMX is not "0" (read at every call: tests and benchmarks compare both
// kernels in one process). No system call: the block rule asks this.
bool amx_available();
// amx_available(), and Linux (>= 5.16) let this process use the tile data
// (arch_prctl, asked once): whether bf16 plans run on tiles.
bool amx_enabled();

class AmxBrgemm {
 public:
  // The kernel for m x n x k blocks (k even) with strides and leading
  // dimensions in elements; `accumulate` false overwrites C.
  AmxBrgemm(int m, int n, int k, std::int64_t stride_a, std::int64_t stride_b, std::int64_t lda,
            std::int64_t ldb, std::int64_t ldc, bool accumulate);

  // C (+)= sum over `count` blocks, as described above. Loads its tile
  // configuration on every call (another library, oneDNN among them, may have
  // loaded its own on this thread since) and releases the tiles at the end.
  void operator()(const libxsmm_bfloat16* a, const libxsmm_bfloat16* b, float* c,
                  unsigned long long count) const;

  // The 64-byte operand of LDTILECFG.
  struct TileConfig {
    std::uint8_t palette = 1, start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
  };

 private:
  // Up to 32 x 32 of C: `m_tiles` (`n_tiles`) tiles of 16 rows (columns) at
  // most, from (m0, n0), with the tile shapes of configs_[config].
  struct RegisterBlock {
    int m0, n0, m_tiles, n_tiles, config;
  };

  int k_, k_step_;
  std::int64_t stride_a_, stride_b_, lda_, ldb_, ldc_;
  bool accumulate_;
  std::vector<TileConfig> configs_;
  std::vector<RegisterBlock> blocks_;
};

}  // namespace sfc
