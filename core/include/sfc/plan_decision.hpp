// Planning as data: decide() turns a request and the machine into every
// choice a GemmPlan makes -- blocks and the regime that chose them, the K
// split, the thread team, which operands gemm() packs or reads in place,
// whether C streams, the kernel family of each operand map and the bytes of
// workspace -- without allocating a buffer, generating a kernel or opening
// a thread team. GemmPlan executes the decision, the model may price it,
// tests and `sfc-tune gemm` print it.
//
//   const sfc::PlanDecision d = sfc::decide(request, sfc::ArchContext::detect());
//   for (const std::string& line : d.describe()) std::puts(line.c_str());
//
// Everything but shape, dtype, layout and threads is in the loop's terms: a
// row-major plan runs C^T = B^T A^T (see sfc/gemm.hpp), so its loop M is the
// caller's N; caller_blocks(), caller_mb() and caller_nb() translate back.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"

namespace sfc {

// The regimes of the block-size rule (core/src/blocking.cpp), each with a
// one-line reason and the experiment record that chose it (block_strategy_info).
enum class BlockStrategy : unsigned {
  target_split,       // the default: equal blocks near the dtype's targets
  whole_vectors,      // bm in whole 64-byte vectors where M spans several blocks
  amx_k_steps,        // bf16 bk in whole AMX tile steps of 32
  divisors,           // plain operands: blocks that divide M, N and K
  wide_tiles,         // bn twice the target where the loop M is three or four blocks
  thin_columns,       // bn = kThinTileColumns where a thin M meets a B read in place
  one_column,         // one column of 512-row tiles for a loop N of 1-1.5 blocks
  row_task_rows,      // bf16 row tasks on tiles of 128 rows
  tall_tiles,         // bm up to 1024 for a K of one block or one column of tiles
  packed_panel_rows,  // tall tiles of at most 128 rows where A is packed panel by panel
  requested,          // PlanRequest::blocks named at least one block size
};
inline constexpr unsigned kBlockStrategyCount = unsigned(BlockStrategy::requested) + 1;

struct BlockStrategyInfo {
  std::string_view name;    // as describe() prints it
  std::string_view reason;  // one line
  std::string_view record;  // docs/experiments/... that decided it
};
const BlockStrategyInfo& block_strategy_info(BlockStrategy strategy);
std::string_view to_string(BlockStrategy strategy);

// The block rule's answer with the regimes that shaped it: `strategy` is the
// last (most specific) one that changed a block size, `regimes` a bit per
// BlockStrategy that did (target_split always).
struct BlockChoice {
  BlockSizes blocks;
  BlockStrategy strategy = BlockStrategy::target_split;
  unsigned regimes = 1u << unsigned(BlockStrategy::target_split);
  bool applied(BlockStrategy s) const { return (regimes >> unsigned(s)) & 1u; }
};
// choose_blocks() on an explicit machine, with its reasons.
BlockChoice choose_block_strategy(const GemmShape& loop, DType dtype, int threads, Layout layout,
                                  const ArchContext& arch);

// The kernels of one operand map (core/src/kernel_dispatch.cpp).
enum class KernelFamily {
  none,      // the map is not built
  libxsmm,   // LIBXSMM's batch-reduce kernel
  simd_row,  // core's single-row kernel (a loop M of 1; of 2 in fp32 and fp64)
  narrow,    // core's narrow kernel (bf16 one column read in place)
  by_block,  // LIBXSMM's plain kernels, one K block per call (tall tiles read in place)
  amx,       // core's AMX tile kernel (bf16)
};
std::string_view to_string(KernelFamily family);

// Which tasks the loop runs in which order (run_sfc_ca).
enum class CurveOrder { gilbert, row_by_row };

struct PlanDecision {
  // What was asked, resolved.
  GemmShape shape;  // the caller's
  DType dtype = DType::f32;
  Layout layout = Layout::blocked;
  int threads = 1;  // at most this many run a call

  // The loop's problem (C^T = B^T A^T for row-major operands).
  bool transposed = false;
  GemmShape loop_shape;
  BlockChoice block_choice;  // blocks in the loop's terms
  std::int64_t mb = 0, nb = 0, kb = 0;
  int k_tail = 0;                        // K in a shorter last K block (0: bk divides K)
  int k_layers = 1, k_block_factor = 1;  // effective (clamped to the K blocks)
  unsigned long long longest_slice = 0;  // K blocks in the longest (round, layer) slice

  // The loop's schedule.
  int team = 1;               // threads of a call that packs nothing up front
  int packing_team = 1;       // threads of a call whose team packs operands first
  std::int64_t tasks = 0;     // (layer, task) pairs of the loop
  bool row_tasks = false;     // each task a whole row of tiles (Impl::row_span)
  std::int64_t row_span = 1;  // tiles per task
  CurveOrder curve = CurveOrder::gilbert;

  // Operands.
  bool plain = false;                                // gemm() on row/col-major matrices
  bool panels_a = false, panels_b = false;           // loop A (B) packed panel by panel inside the loop
  unsigned long long panel_blocks = 0;               // K blocks per batch
  std::size_t a_panel_bytes = 0, b_panel_bytes = 0;  // per thread
  bool b_in_columns = false;                         // packed B as K x bn column panels
  std::int64_t packed_b_ld = 0;
  bool stream_c = false;           // the plan's own C streams (GemmPlan::streams_c)
  bool stream_blocked_c = false;   // a blocked C streams (execute())
  bool transpose_kernels = false;  // LIBXSMM transpose kernels for packing (fp32, fp64 plain)

  // Kernels of each operand map (none: not built).
  bool amx = false;
  KernelFamily blocked_kernels = KernelFamily::none;
  KernelFamily c_in_place_kernels = KernelFamily::none;    // A, B packed; C in place
  KernelFamily b_in_place_kernels = KernelFamily::none;    // A packed; B, C in place
  KernelFamily all_in_place_kernels = KernelFamily::none;  // nothing copied (one column of tiles)

  // Memory.
  GemmCopies tight_copies;          // what gemm() on tight matrices of the plan's layout copies
  std::size_t scratch_bytes = 0;    // the K_layers-1 copies of C
  std::size_t workspace_bytes = 0;  // scratch plus the buffers tight_copies needs

  const BlockSizes& blocks() const { return block_choice.blocks; }
  BlockSizes caller_blocks() const;
  std::int64_t caller_mb() const { return transposed ? nb : mb; }
  std::int64_t caller_nb() const { return transposed ? mb : nb; }
  std::string_view kernel() const { return amx ? "amx" : "libxsmm"; }  // GemmPlan::kernel()
  std::size_t a_elements() const;                                      // the loop's padded blocked A
  std::size_t b_elements() const;
  std::size_t c_elements() const;

  // One fact per line, "name: value", for a reader.
  std::vector<std::string> describe() const;
};
std::ostream& operator<<(std::ostream& out, const PlanDecision& decision);

// Throws sfc::Error with a one-line reason for a request no plan can run
// (sizes, knobs, threads, block sizes out of range).
void check_request(const PlanRequest& request);

// Every choice of a plan for `request` on `arch`; throws sfc::Error for a
// request GemmPlan would refuse. No buffer, kernel or thread team.
PlanDecision decide(const PlanRequest& request, const ArchContext& arch);

}  // namespace sfc
