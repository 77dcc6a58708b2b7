// GemmPlan's state: the decision (sfc/plan_decision.hpp) and what plan.cpp
// built from it (curve map, K slices, kernels: kernel_dispatch.cpp,
// buffers: workspace.cpp), shared by plan.cpp (the SFC-CA loop) and pack.cpp
// (layout conversion). Private to core/.
#pragma once
#include <libxsmm.h>

#include <atomic>
#include <cassert>
#include <memory>
#include <type_traits>
#include <vector>

#include "amx_brgemm.hpp"
#include "sfc/aligned_buffer.hpp"
#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"
#include "sfc/gilbert.hpp"
#include "sfc/plan_decision.hpp"
#include "simd_kernel.hpp"
#include "task_stretches.hpp"

namespace sfc {

// The K blocks one (round, layer) pair contracts over: [begin, begin + count).
struct KSlice {
  std::int64_t begin;
  unsigned long long count;  // LIBXSMM's batch-reduce count type
};

// The batch-reduce kernels: `first` overwrites C (beta = 0, round 0),
// `rest` accumulates into it (beta = 1, later rounds). Only the pair of the
// plan's dtype is set. `streaming`: `first` storing C with non-temporal
// stores, set where the plan streams C (Impl::stream_c) and the tile's
// columns start on whole cache lines.
template <class Kernel>
struct KernelPair {
  Kernel first{}, rest{}, streaming{};
};

// LIBXSMM's plain kernels standing in for a batch-reduce one, one K block per
// call: `first` (beta = 0; null in a pair's `rest`) on the first block,
// `rest` (beta = 1) on the others, the blocks stride_a (stride_b) elements
// apart. For a loop A read in place (OperandMap all_in_place_map): see there.
template <class Plain>
struct BlockByBlock {
  Plain first = nullptr, rest = nullptr;
  std::int64_t stride_a = 0, stride_b = 0;
};

// A batch-reduce kernel of one element type: LIBXSMM's, one of core's own
// for the tile shapes LIBXSMM runs badly (simd_kernel.hpp), LIBXSMM's plain
// kernels block by block, or for bf16 the AMX kernel where the CPU has tiles
// (amx_brgemm.hpp). Called as LIBXSMM's are.
template <class In, class Out, class Xsmm, class Plain>
struct BatchKernel {
  Xsmm xsmm = nullptr;
  SimdKernel<In, Out> simd{};
  BlockByBlock<Plain> by_block{};
  std::shared_ptr<const AmxBrgemm> amx{};  // bf16 only; shared by the edge pairs that reuse the full tile's
  explicit operator bool() const { return xsmm || simd || by_block.rest || amx; }
  void operator()(const In* a, const In* b, Out* c, const unsigned long long* count) const {
    if (xsmm) {
      xsmm(a, b, c, count);
    } else if (simd) {
      simd(a, b, c, count);
    } else if (by_block.rest) {
      for (unsigned long long i = 0; i < *count; ++i)
        (i == 0 && by_block.first ? by_block.first : by_block.rest)(
            a + std::int64_t(i) * by_block.stride_a, b + std::int64_t(i) * by_block.stride_b, c);
    } else if constexpr (std::is_same_v<In, libxsmm_bfloat16>) {
      (*amx)(a, b, c, *count);
    }
  }
};
using F32Kernel = BatchKernel<float, float, libxsmm_smmfunction_reducebatch_strd, libxsmm_smmfunction>;
using F64Kernel = BatchKernel<double, double, libxsmm_dmmfunction_reducebatch_strd, libxsmm_dmmfunction>;
using Bf16Kernel =
    BatchKernel<libxsmm_bfloat16, float, libxsmm_bsmmfunction_reducebatch_strd, libxsmm_bsmmfunction>;

// Where the loop finds its operands, in elements: block (im, kb) of A at
// im * a_row_block + kb * a_k_block, block (in, kb) of B at in * b_col_block +
// kb * b_k_block, tile (im, in) of C at im * c_row_block + in * c_col_block,
// its columns c_column apart; a C copy of another layer c_copy further on.
// Two maps exist: the blocked layout (every block contiguous), and plain
// column-major matrices read and written in place (see OperandMap).
// The tiles of the last row (column) of tiles have last_rows (last_cols)
// rows (columns): bm and bn in the padded blocked layout, what is left of M
// and N when C is a plain matrix written in place.
struct Addressing {
  std::int64_t a_row_block, a_k_block, b_col_block, b_k_block;
  std::int64_t c_row_block, c_col_block, c_column, c_copy;
  int last_rows, last_cols;
};

// The kernels of one operand map: a batch's consecutive A (B) blocks lie
// at.a_k_block (at.b_k_block) elements apart; A, B and C are read with leading
// dimensions lda, ldb, ldc.
// Per tile: [last row of tiles][last column of tiles] (see Addressing).
template <class Kernel>
using TileKernels = KernelPair<Kernel>[2][2];

// An addressing plus the batch-reduce kernels built for it (the leading
// dimensions, the stride between the blocks of a batch and the edge tiles'
// sizes are baked into LIBXSMM kernels). Only the kernels of the plan's dtype
// are set.
// A map that reads an operand in place along a K the blocks do not divide
// has a shorter last K block (Impl::k_tail): `tail` is then set, and the
// *_tail kernels are that block's.
struct OperandMap {
  Addressing at{};
  TileKernels<F32Kernel> f32{}, f32_tail{};
  TileKernels<F64Kernel> f64{}, f64_tail{};
  TileKernels<Bf16Kernel> bf16{}, bf16_tail{};
  bool ready = false, tail = false;
};

struct GemmPlan::Impl {
  // Every choice below, as decide() made it; the fields that follow are
  // copied from it (adopt(), plan.cpp) or built from it.
  PlanDecision decision;
  // A plan for row-major operands computes C^T = B^T A^T: the row-major
  // matrices, read as column-major, are exactly B^T, A^T and C^T, so packing
  // becomes plain copies of contiguous runs instead of transposes (what BLAS
  // libraries do with row-major calls). `shape` and everything below are those
  // of the column-major problem the loop runs; `user_shape` is the caller's.
  bool transposed = false;
  GemmShape user_shape;
  GemmShape shape;
  DType dtype;
  int threads;  // asked for: at most this many run a call
  // How many do (team.hpp): a thread joins a call only for its share of
  // the work, and the loop's team has no more threads than tasks (tiles x
  // layers), since a thread without a task would only wait at the barriers.
  // Opening a team costs about what one core computes in kFlopsPerThread:
  // `team` takes a thread per kFlopsPerThread; a call that packs operands or
  // copies C in teams of its own (`packing_team`, which also runs such a loop)
  // passes a second barrier, and takes one per twice that
  // (docs/experiments/2026-12-04-thread-team-zen5.md; kFlopsPerThread: plan_decision.cpp).
  int team;
  int packing_team;
  bool amx = false;  // bf16 on AMX tiles (amx_brgemm.hpp) rather than LIBXSMM
  int layers;        // effective K_layers
  int rounds;        // effective k_block_factor
  BlockSizes blocks;
  std::int64_t mb, nb, kb;
  int k_tail = 0;               // K in the last K block where bk does not divide K (0 where it does)
  std::vector<GridCell> curve;  // curve index -> (im, in)
  std::vector<KSlice> slices;   // [round * layers + layer]

  OperandMap blocked_map;
  // gemm() on plain matrices with tight leading dimensions (the kernels are
  // built for those): only A is packed, B is read and C written in place
  // (b_in_place_map; a K the blocks do not divide ends on a shorter block),
  // or A and B are packed and C written in place (c_in_place_map). The tiles at the edges of a ragged M or N
  // run kernels of their own size on the padded packed blocks (one round only: see build_kernels). gemm()
  // packs all three otherwise. A B stored transposed is packed: LIBXSMM's TRANS_B kernels read it in place at
  // full speed only for some leading dimensions, those whose rows do not share a few cache sets
  // (docs/experiments/2026-12-07-figures-from-code-comments.md#transposed-b).
  OperandMap b_in_place_map;
  OperandMap c_in_place_map;
  // With one column of tiles (nb = 1) every A block is read by one task,
  // once: there is no reuse for packing to protect, so a tight A is read in
  // place as well and nothing is copied (alpha = 1; bf16 only up to
  // narrow_columns(), on the narrow kernel: LIBXSMM's bf16 kernels need A in
  // VNNI pairs). fp32 and fp64 tiles of kByBlockRows rows or more (tall tiles:
  // a wide caller's N) run LIBXSMM's plain kernels there, one K block per call
  // (BlockByBlock), not its batch-reduce kernel: read in place, each K block
  // of A is bk columns a leading dimension apart, which the batch-reduce
  // kernel ran slower on tall tiles; shorter tiles keep the batch, which holds
  // C in registers (docs/experiments/2026-12-02-stall-by-block-zen5.md;
  // figures: docs/experiments/2026-12-07-figures-from-code-comments.md#one-column-read-in-place;
  // kByBlockRows: plan_decision.cpp).
  OperandMap all_in_place_map;
  // LIBXSMM's transpose kernels for whole blocks packed from a matrix stored
  // the other way round (the loop's A stored row-major: bk x bm in, bm x bk
  // out; its B: bn x bk in, bk x bn out); null for bf16 or where LIBXSMM has
  // none, and then packing transposes element by element (LIBXSMM's run near
  // a plain copy's speed: docs/experiments/2026-12-07-figures-from-code-comments.md#transpose-kernels).
  libxsmm_xtransfunction transpose_a = nullptr, transpose_b = nullptr;

  AlignedBuffer scratch;  // C copies of layers 1..layers-1
  // gemm()'s buffers, plain layouts only: those a call in the plan's own
  // layout with tight leading dimensions needs are allocated with the plan,
  // the others by the first call that needs them.
  bool plain = false;
  AlignedBuffer a_packed, b_packed, c_packed;
  // With a single column of tiles (nb = 1: the loop's N, the caller's M of a
  // row-major call, fits one block) every A block is used by one task only.
  // Where A cannot be read in place (all_in_place_map: padded, transposed,
  // alpha; bf16 with an odd last K block), packing all of A before the loop
  // would write it to memory and read it back: gemm() instead packs each task's A panel (the blocks of its K
  // slice) into the thread's own buffer just before the kernel reads it from
  // cache (docs/experiments/2026-12-07-figures-from-code-comments.md#a-panels-packed-in-the-loop).
  // The same holds for B with a single row of tiles (mb = 1), where B is
  // packed at all (a transposed or padded B; bf16 with an odd last K block).
  // A long slice is packed and multiplied panel_blocks K blocks at a time
  // (kPanelBytes, plan_decision.cpp), so that the panel stays in L2 between its packing and
  // the kernel (without panels, panel_blocks is the longest slice: one
  // batch each). a_panels (b_panels) holds one panel of a_panel_bytes
  // (b_panel_bytes, whole cache lines) per thread.
  bool panels_a = false, panels_b = false;
  // The distance between two columns of the packed (blocked) B. A column
  // panel of B is stored as one K x bn column-major matrix (K padded to whole
  // blocks; the K blocks of a column follow one another), not as bk x bn
  // blocks one after the other: the kernel broadcasts from a few columns of B
  // at a time through every K block of its batch, and with blocks each column
  // was a 256-byte run 16 KiB from the next, which the hardware prefetchers
  // do not follow into a cold B
  // (docs/experiments/2026-12-05-b-in-column-panels-zen5.md).
  // The plain entries read a tight B in place, which is the same layout.
  // B packed a panel of K blocks at a time inside the loop (panels_b) keeps
  // blocks (ld bk): the per-thread panel holds a few K blocks, not all.
  std::int64_t packed_b_ld = 0;
  // Row tasks: with a few columns of tiles (1 < nb <= kRowTaskColumns) on
  // plain operands the loop's A is packed, and each A block serves the nb
  // tiles of its row. Packed up front, a large A is written to memory and
  // read back: three passes over A beside the kernels' one, none overlapped.
  // Instead each task is a whole row of tiles: the thread packs the row's
  // panel into its own buffer (panels_a) and multiplies it into the row's nb
  // tiles while it is in L2 (the curve then runs row by row). Only for an A
  // of kRowTaskMinBytes or more: smaller ones stay in cache when packed up
  // front. Not on AMX tiles (not measured there)
  // (docs/experiments/2026-12-05-row-tasks-zen5.md).
  // The limits and the test: row_tasks.hpp.
  TaskStretches stretches;    // the loop's tasks among its team (task_stretches.hpp)
  std::int64_t row_span = 1;  // tiles per task: nb with row tasks, else 1
  unsigned long long panel_blocks = 0;
  // C written with non-temporal stores (KernelPair::streaming), past the
  // caches: where each tile of C is written once, by one kernel call (one
  // layer, one round, one batch), and C is too large to stay in cache for the
  // caller anyway (kStreamBytes: a judgement -- past the L2 of most cores --
  // not a measurement; a C in cache would be read back from there). The
  // stores then skip reading every line of C before writing it. A blocked C
  // streams only where K is short (kStreamBlockedMaxK): its tiles are
  // contiguous, the prefetchers fetch them for ownership ahead of the stores,
  // and beyond a short K the non-temporal stores cost more than those reads; a
  // plain C (columns a leading dimension apart) streams at any K
  // (docs/experiments/2026-12-06-blocked-c-streaming-zen5.md; figures:
  // docs/experiments/2026-12-07-figures-from-code-comments.md#streaming-c).
  // (kStreamBytes, kStreamBlockedMaxK: plan_decision.cpp)
  // stream_c: the C of the plan's own layout (what streams_c() reports);
  // stream_blocked_c: a blocked C, which execute() writes whatever the plan's
  // layout (the same flag for a blocked plan; a plain one's only up to
  // kStreamBlockedMaxK). The second implies the first.
  bool stream_c = false, stream_blocked_c = false;
  std::size_t a_panel_bytes = 0, b_panel_bytes = 0;
  AlignedBuffer a_panels, b_panels;

#ifndef NDEBUG
  // A plan runs for one caller at a time (it owns the scratch above); debug
  // builds check it (OneCaller), release builds pay nothing.
  std::atomic<bool> running{false};
#endif

  std::size_t a_elements() const { return std::size_t(mb * kb) * blocks.bm * blocks.bk; }
  std::size_t b_elements() const { return std::size_t(nb * kb) * blocks.bk * blocks.bn; }
  std::size_t c_elements() const { return std::size_t(mb * nb) * blocks.bm * blocks.bn; }
  const KSlice& slice(int round, std::int64_t layer) const {
    return slices[std::size_t(round) * std::size_t(layers) + std::size_t(layer)];
  }
};

// Held by execute() and gemm() for the length of a call: in a debug build,
// a second caller on the same plan at the same time is an assertion failure
// rather than two threads writing one scratch copy of C.
class OneCaller {
 public:
#ifndef NDEBUG
  explicit OneCaller(GemmPlan::Impl& p) : p_(p) {
    [[maybe_unused]] const bool busy = p_.running.exchange(true);
    assert(!busy && "a GemmPlan was executed by two callers at once; build one plan per caller");
  }
  ~OneCaller() { p_.running.store(false); }

 private:
  GemmPlan::Impl& p_;
#else
  explicit OneCaller(GemmPlan::Impl&) {}
#endif
};

// Throws sfc::Error unless `ld` can be C's leading dimension in `layout`.
void check_result_ld(const GemmPlan::Impl& p, Layout layout, std::int64_t ld);
// C = alpha * C_blocked + beta * C into the caller's plain C (a thread team of
// its own); beta = 0 never reads C. `ldc` must have been checked (check_result_ld),
// as for the two below.
void unpack_result(const GemmPlan::Impl& p, const void* c_blocked, Layout layout, void* c, std::int64_t ldc,
                   double alpha, double beta);
// C = beta * C on the caller's plain C (beta = 0: zeros, C never read).
void scale_result(const GemmPlan::Impl& p, Layout layout, void* c, std::int64_t ldc, double beta);
// The same as a worksharing loop for the calling thread team (every thread
// calls it; it ends with the team's barrier), for the loop's prologue.
void scale_result_lines(const GemmPlan::Impl& p, Layout layout, void* c, std::int64_t ldc, double beta);

// Packing one operand of a plain layout into the plan's blocked layout
// (pack.cpp), in the caller's terms.
enum class Operand { a, b };
// Whether the caller's `operand` is the loop's A: a transposed plan's loop A
// is the caller's B, and its loop B the caller's A.
inline bool is_loop_a(const GemmPlan::Impl& p, Operand operand) {
  return (operand == Operand::a) != p.transposed;
}
// Whether gemm() packs the caller's `operand`, where it packs it at all,
// panel by panel inside the loop (Impl::panels_a) rather than up front.
inline bool packs_in_panels(const GemmPlan::Impl& p, Operand operand) {
  return is_loop_a(p, operand) ? p.panels_a : p.panels_b;
}
// Throws sfc::Error if `ld` cannot be the operand's leading dimension.
void check_operand_ld(const GemmPlan::Impl& p, Operand operand, Layout layout, std::int64_t ld);
// A worksharing loop for the calling thread team (every thread of it calls
// this; it ends with the team's barrier). `ld` must have been checked.
// `scale` multiplies every element on the way (alpha folded into the packed
// operand); fp32 and fp64 only: bf16 takes 1.
void pack_operand(const GemmPlan::Impl& p, Operand operand, Layout layout, const void* src, std::int64_t ld,
                  void* dst, double scale = 1);

// The loop's A blocks (index = im, slice.begin ..) or B blocks (index = in)
// of one task into `dst`, in the blocked layout's order (pack.cpp); called by
// one thread. `operand` (in the caller's terms, as for pack_operand) is read
// as `layout`, with `ld` checked; `scale` as for pack_operand.
void pack_panel(const GemmPlan::Impl& p, Operand operand, Layout layout, const void* src, std::int64_t ld,
                std::int64_t index, const KSlice& slice, void* dst, double scale);

}  // namespace sfc
