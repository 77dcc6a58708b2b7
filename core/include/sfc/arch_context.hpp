// ArchContext: the machine constants every layer shares, in one place (as
// BLIS keeps its per-architecture context), so that the plan, the model, the
// tuner and the readers of stored results cannot disagree:
//   - per element type: the bytes of an input and of an accumulator element,
//     the block-size targets of choose_blocks() and the K multiple;
//   - the knob limits (sfc/knobs.hpp);
//   - the share of L2 the model keeps one round's A and B panels within.
// The values are what LIBXSMM 1.17's kernels and the measurements behind
// core/src/blocking.cpp and docs/predictor.md support on the CPUs tested
// (AVX2 Zen 3, AVX-512 Zen 5 and Xeon); a port to another kind of CPU starts here.
#pragma once
#include <cstddef>

#include "sfc/gemm.hpp"
#include "sfc/knobs.hpp"

namespace sfc {

struct DTypeConstants {
  std::size_t input_bytes;   // one A or B element
  std::size_t output_bytes;  // one C element (the accumulation type)
  int block_target_mn;       // choose_blocks()'s target for bm and bn
  int block_target_k;        // and for bk
  int bk_multiple;           // bk is rounded up to a multiple of this (bf16: VNNI pairs along K)
  int block_target_m_tall;   // bm's target for tall tiles (a K of one block; plain A panels)
};

constexpr DTypeConstants dtype_constants(DType dtype) {
  switch (dtype) {
    case DType::f64: return {8, 8, 32, 64, 1, 1024};
    case DType::bf16: return {2, 4, 64, 64, 2, 1024};
    case DType::f32: break;
  }
  return {4, 4, 64, 64, 1, 1024};
}

// choose_blocks() makes tiles tall (bm up to block_target_m_tall) where
// long runs of C or A pay (see core/src/blocking.cpp), but keeps at least
// this many tiles per thread for the balance of the static schedule.
inline constexpr int kTallTilesPerThread = 2;

// choose_blocks() cuts the loop's N into blocks of this many columns where a
// thin M (one row of tiles) meets a B read in place: the kernel broadcasts
// from every column of its tile in turn, and columns a power-of-two leading
// dimension apart share one L1 set, whose ways (8 on Zen 3, 12 on Zen 5) must
// hold them all (see core/src/blocking.cpp).
inline constexpr int kThinTileColumns = 8;

// Paper, section III-C: k_block_factor is the smallest that keeps the A and B
// panels one thread touches in one round within this fraction of its L2. The
// predictor may fit another fraction to tuned data (docs/predictor.md).
inline constexpr double kPanelL2Fraction = 0.5;

// What of this machine and process a plan's decisions depend on (decide(),
// sfc/plan_decision.hpp), read once so that deciding itself reads nothing.
struct ArchContext {
  bool amx_tiles = false;       // the block rule pads bf16 K to AMX tile steps (CPU has AMX, SFC_AMX not 0)
  bool amx_kernels = false;     // bf16 plans run on AMX tiles (amx_tiles, and Linux granted the tile data)
  int narrow_bf16_columns = 8;  // the widest bf16 tile of the narrow kernel (12 with AVX512-BF16 pairs)
  int default_threads = 1;      // a request of 0 threads gets this many
  bool one_thread = false;      // a forked child: every request runs on one thread
  int usable_threads(int threads) const { return one_thread || threads < 1 ? 1 : threads; }
  // This process now. `ask_for_tiles`: ask Linux for the AMX tile data
  // (what a bf16 plan does: the grant enlarges every signal frame, so no
  // other plan asks); without, amx_kernels is false and nothing is asked.
  static ArchContext detect(bool ask_for_tiles = true);
};

// Whether this process may run AMX bf16 tile instructions: the CPU has
// AMX-TILE and AMX-BF16, the OS saves their state, and Linux granted the
// tile data to the process (asked on the first call; the grant covers every
// thread and enlarges every signal frame). What the machine can do, whatever
// SFC_AMX says; GemmPlan::kernel() tells what a plan runs.
bool amx_bf16_usable();

}  // namespace sfc
