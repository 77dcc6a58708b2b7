// GemmPlan's state, shared by plan.cpp (planning, the SFC-CA loop),
// pack.cpp (layout conversion) and blocking.cpp (the row-task limits). Private to core/.
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

// Fills the four tiles' kernel pairs with make(m, n, accumulate), which
// returns a kernel for m x n tiles (false if there is none).
template <class Kernel, class Make>
bool dispatch(TileKernels<Kernel>& k, const BlockSizes& b, const Addressing& at, Make make) {
  bool ok = true;
  for (int last_row = 0; last_row < 2; ++last_row)
    for (int last_col = 0; last_col < 2; ++last_col) {
      const int m = last_row ? at.last_rows : b.bm, n = last_col ? at.last_cols : b.bn;
      KernelPair<Kernel>& pair = k[last_row][last_col];
      if (m == b.bm && n == b.bn && (last_row || last_col)) {  // no edge there: the full tile's kernels
        pair = k[0][0];
        continue;
      }
      pair.first = make(m, n, false);
      pair.rest = make(m, n, true);
      ok = ok && pair.first && pair.rest;
    }
  return ok;
}

// The LIBXSMM batch-reduce kernels (`make` is LIBXSMM's dispatch function of
// the element type) for blocks of `b` addressed as `at`.
template <class Kernel, class Function, class Scalar>
bool dispatch_libxsmm(TileKernels<Kernel>& k,
                      Function (*make)(libxsmm_blasint, libxsmm_blasint, libxsmm_blasint, libxsmm_blasint,
                                       libxsmm_blasint, const libxsmm_blasint*, const libxsmm_blasint*,
                                       const libxsmm_blasint*, const Scalar*, const Scalar*, const int*,
                                       const int*),
                      const BlockSizes& b, const Addressing& at, libxsmm_blasint lda, libxsmm_blasint ldb,
                      libxsmm_blasint ldc, std::size_t in_bytes, int flags, bool streaming = false) {
  const Scalar alpha = 1, beta0 = 0, beta1 = 1;
  const libxsmm_blasint stride_a = libxsmm_blasint(at.a_k_block * in_bytes);  // bytes, not elements
  const libxsmm_blasint stride_b = libxsmm_blasint(at.b_k_block * in_bytes);
  if (!dispatch(k, b, at, [&](libxsmm_blasint m, libxsmm_blasint n, bool accumulate) {
        return Kernel{make(m, n, b.bk, stride_a, stride_b, &lda, &ldb, &ldc, &alpha,
                           accumulate ? &beta1 : &beta0, &flags, nullptr)};
      }))
    return false;
  // Non-temporal stores need every column of a tile on a cache line of its
  // own start: tiles, columns and rows of tiles whole lines apart.
  const auto lines = [](std::int64_t elements) { return elements * std::int64_t(sizeof(Scalar)) % 64 == 0; };
  if (!streaming || !lines(at.c_row_block) || !lines(at.c_col_block) || !lines(at.c_column)) return true;
  const int nts = flags | LIBXSMM_GEMM_FLAG_ALIGN_C_NTS_HINT;
  for (int last_row = 0; last_row < 2; ++last_row)
    for (int last_col = 0; last_col < 2; ++last_col) {
      const libxsmm_blasint m = last_row ? at.last_rows : b.bm, n = last_col ? at.last_cols : b.bn;
      if (lines(m))  // whole vectors: no masked stores
        k[last_row][last_col].streaming =
            Kernel{make(m, n, b.bk, stride_a, stride_b, &lda, &ldb, &ldc, &alpha, &beta0, &nts, nullptr)};
    }
  return true;
}

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
  // Opening a team of two costs ~3 us on the 2-core Zen 5 guest, what one
  // core computes in ~0.5 MFLOP at ~200 GFLOP/s: `team` takes a thread per
  // kFlopsPerThread; a call that packs operands or copies C in teams of its
  // own (`packing_team`, which also runs such a loop) passes a second
  // barrier, and takes one per twice that. Measured (`sfc-tune gemm M N K
  // --layout L --threads T --reps 300`, min of the cold runs): before ->
  // after, blocked 16^3 2.4 -> 0.1 us, 32^3 4.1 -> 0.5, 64^3 6.8 -> 2.9,
  // 64x64x128 12.0 -> 8.2; row-major 16^3 5.3 -> 0.2, 32^3 6.4 -> 0.8,
  // 64^3 7.5 -> 3.2; one thread against two, row-major 96^3 11.2-11.8
  // against 13.4-14.1 us (1.8 MFLOP), 128^3 24.9 against 22.0; blocked
  // 96^3 12.8 against 11.6, 128x128x64 (2.1 MFLOP) 13.2 against 9.3.
  static constexpr double kFlopsPerThread = 5e5;
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
  // run kernels of their own size on the padded packed blocks (one round only: see the constructor). gemm()
  // packs all three otherwise. A B stored transposed is packed: LIBXSMM's TRANS_B kernels read it in place at
  // full speed only for some leading dimensions (64^3 batches, fp32: 130 GFLOP/s at ld 1152; 40-70 at ld 512,
  // 1024, 1536, 2048, 4096, whose rows share a few cache sets; 138 untransposed).
  OperandMap b_in_place_map;
  OperandMap c_in_place_map;
  // With one column of tiles (nb = 1) every A block is read by one task,
  // once: there is no reuse for packing to protect, so a tight A is read in
  // place as well and nothing is copied (alpha = 1; bf16 only up to
  // narrow_columns(), on the narrow kernel: LIBXSMM's bf16 kernels need A in
  // VNNI pairs). Measured against packing A panel by panel (fp32 row-major,
  // 2 threads, median of 5 interleaved runs of 10, GFLOP/s): 1x4096x4096
  // 11.1 -> 20.4, 2x4096x4096 17.2 -> 37.5, 8x4096x4096 65.4 -> 118.5,
  // 16x4096x4096 93.1 -> 171.2, 32x2048x2048 124.2 -> 176.0, 64x8192x1024
  // 174.5 -> 207.5; bf16 1x4096x4096 9.9 -> 18.2, 8x4096x4096 71.6 -> 85.8.
  // fp32 and fp64 tiles of kByBlockRows rows or more (tall tiles: a wide
  // caller's N) run LIBXSMM's plain kernels there, one K block per call
  // (BlockByBlock), not its batch-reduce kernel: read in place, each K block
  // of A is bk columns a leading dimension apart, and on tall tiles the
  // batch-reduce kernel ran them at 0.75-0.9x the plain one, which re-reads
  // and re-writes the tile of C per block (the batch kernel keeps it in
  // registers). On tiles of 256 rows or fewer the plain kernels lost
  // (0.82-0.97x; 64x160x4064 row-major 0.67x), so those keep the batch.
  // Measured (row-major, 2 threads, mean of 20 cold runs, GFLOP/s, batch ->
  // by block, the binaries one after the other): M x N x K for M in {8, 32,
  // 64}, K in {1024, 4096}: N = 2048 (tiles of 512 rows) 0.93-1.11x, N = 4096
  // and 8192 (1024 rows) 1.03-1.57x, N <= 1024 0.82-1.08x; in `bench` beside
  // oneDNN (fastest of cold runs) 61x4093x4091 198-208 -> 239-277,
  // 32x2048x2048 187-235 -> 241-264, column-major 4093x61x4091 217 -> 302,
  // 2048x32x2048 195 -> 273, 8192x64x1024 221 -> 279; fp64 level
  // (64x4096x4096 102-104 -> 100-105). A prototype outside the engine
  // (4096x64x4096) put A packed contiguous beforehand (not timed) ahead of
  // both, and software prefetches of the next blocks, issued before each
  // call, behind both.
  static constexpr int kByBlockRows = 512;
  OperandMap all_in_place_map;
  // LIBXSMM's transpose kernels for whole blocks packed from a matrix stored
  // the other way round (the loop's A stored row-major: bk x bm in, bm x bk
  // out; its B: bn x bk in, bk x bn out); null for bf16 or where LIBXSMM has
  // none, and then packing transposes element by element. Measured (fp32,
  // 64 x 64 blocks of a 2048^2 matrix): 6.3 GB/s against 4.3 element-wise
  // and 6.6 for a plain copy.
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
  // cache. Measured (fp32, 2 threads, a 64-row panel of K = 4096): C = A B
  // with n = 1 14.3 -> 7.5 ms, n = 8 14.5 -> 9.0, n = 32 3.4 -> 2.9.
  // The same holds for B with a single row of tiles (mb = 1), where B is
  // packed at all (a transposed or padded B; bf16 with an odd last K block).
  // A long slice is packed and multiplied panel_blocks K blocks at a time
  // (kPanelBytes), so that the panel stays in L2 between its packing and
  // the kernel (without panels, panel_blocks is the longest slice: one
  // batch each). a_panels (b_panels) holds one panel of a_panel_bytes
  // (b_panel_bytes, whole cache lines) per thread.
  static constexpr std::size_t kPanelBytes = std::size_t(256) << 10;
  bool panels_a = false, panels_b = false;
  // The distance between two columns of the packed (blocked) B. A column
  // panel of B is stored as one K x bn column-major matrix (K padded to whole
  // blocks; the K blocks of a column follow one another), not as bk x bn
  // blocks one after the other: the kernel broadcasts from a few columns of B
  // at a time through every K block of its batch, and with blocks each column
  // was a 256-byte run 16 KiB from the next, which the hardware prefetchers
  // do not follow into a cold B. Measured (blocked, fp32, 2 threads, `sfc-tune
  // gemm M N K --layout blocked --threads 2 --reps 60 --k-layers KL --kbf F`,
  // min, two alternated rounds, blocks -> panels): 256^3 (1,1) 94-101 -> 84-87
  // us, 256x256x2048 (1,1) 762-781 -> 640-652 us, (2,5) 692-719 -> 646-662,
  // 2048^3 (2,1) 41.6-46.1 -> 40.0-40.9 ms; 256^3 (1,4) and 1024^3 level.
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
  // front. Not on AMX tiles (not measured there). Measured (Zen 5, 2 threads,
  // `sfc-tune bench --shapes F --layout L --vs onednn --config policy`, up
  // front and row tasks alternated twice, WHM over oneDNN's): fp32 row-major
  // M 104-128 by N x K of 1024-8192 (24 shapes) 0.908 / 0.826 -> 0.954 /
  // 0.962 (128x4096x4096 272-292 -> 324-347 GFLOP/s), M 256-512 by N x K of
  // 512-16384 (6) 1.025 / 1.021 -> 1.059 / 1.066, column-major (the same 18
  // swapped) 0.908 / 1.025 -> 1.024 / 1.061; bf16 row-major (18) 0.971 /
  // 0.981 -> 0.992 / 0.969 (level on 64-row tiles; bf16 takes 128: blocking.cpp); fp64 64x4096x4096 108 ->
  // 135-137. The small grid's row-major M 256-512 (32 shapes) level (1.065 / 1.062 -> 1.068 / 1.072), with an
  // A of 1-2 MiB 2-8% behind and 1024 x 1024 ones (4 MiB) 2-3%, hence the floor; nb of 9-16 level (0.997
  // / 1.000 -> 0.990 / 0.994).
  static constexpr std::int64_t kRowTaskColumns = 8;
  static constexpr std::size_t kRowTaskMinBytes = std::size_t(8) << 20;  // the floor (above)
  // And only where every thread gets this many rows (layers count: each is a
  // task of its own): fewer tasks than tiles must not leave threads idle or
  // share the work out unevenly (512x512x16384 row-major, 8 rows: above).
  static constexpr std::int64_t kRowTasksPerThread = 4;
  // Fewer rows than that, but the same number for every thread, take row
  // tasks too, whatever A's size (fp32 and fp64): packed up front, each
  // thread's stretch of the curve spans every row, so each reads the rows
  // the others packed, through the L3; as row tasks each packs its own rows,
  // a panel at a time, and reads them from its L2. Measured on 2 threads only
  // (Zen 5, the small grid's 2 and 4 rows of 128: N of 256 and 512, M of
  // 256-512): `sfc-tune gemm M N K --layout L --threads 2 --reps 300`, mean,
  // median of 3-4 alternations, row-major 256x256x512 216.7 -> 208.8 us,
  // 256x256x2048 806 -> 792 and 777 -> 752, 512x256x256 204 -> 193 and 212
  // -> 214, 256x512x256 and 512x512x512 level; column-major 256x256x2048 772
  // -> 739, 256x256x512 203 -> 196, 512x256x512 382 -> 374; fp64 level
  // (256x256x2048 1653 -> 1614, three more within 1.4%). Side by side with
  // oneDNN (`sfc-tune bench --layout L --vs onednn --config policy`, up front
  // and row tasks alternated twice): in the row-major small grid those 16
  // shapes' ratio +1.1% where the unchanged ones moved -0.2% and -0.8%; the
  // 16 alone, row-major WHM 1.012 / 0.976 -> 0.979 / 0.970 (SFC-CA's rate
  // moving as oneDNN's, -2.6 / +1.0% against -2.4 / +0.8%: level),
  // column-major (M and N swapped) 0.963 / 0.963 -> 0.991 / 1.004. Smaller A
  // in more rows (no floor at all) were level to behind in the same runs (N =
  // 2048: -3%). Not bf16: there row tasks take taller tiles (blocking.cpp),
  // and below the floor ran 2-39% slower on the mean (512x256x256 122 -> 171 us).
  // Whether row tasks pay for `columns` columns of tiles, `rows` tasks
  // (rows of tiles times layers) on `threads`, over an A of `a_bytes` in
  // `dtype`: the plan's test, and the block rule's before it has its blocks
  // (blocking.cpp).
  static bool row_tasks_pay(std::int64_t columns, std::int64_t rows, std::size_t a_bytes, int threads,
                            DType dtype) {
    if (columns <= 1 || columns > kRowTaskColumns) return false;
    if (rows >= kRowTasksPerThread * threads) return a_bytes >= kRowTaskMinBytes;
    return dtype != DType::bf16 && rows >= threads && rows % threads == 0;
  }
  TaskStretches stretches;    // the loop's tasks among its team (task_stretches.hpp)
  std::int64_t row_span = 1;  // tiles per task: nb with row tasks, else 1
  unsigned long long panel_blocks = 0;
  // C written with non-temporal stores (KernelPair::streaming), past the
  // caches: where each tile of C is written once, by one kernel call (one
  // layer, one round, one batch), and C is too large to stay in cache for the
  // caller anyway (kStreamBytes: a judgement -- past the L2 of most cores --
  // not a measurement; a C in cache would be read back from there). The
  // stores then skip reading every line of C before writing it. Measured
  // (fp32, 2 threads, median of 5 interleaved runs of 10, GFLOP/s, without ->
  // with): 4096x4096x16 row-major 230.7 -> 293.7 (bf16 320.1 -> 457.8),
  // blocked 236.5 -> 289.1; 2048x2048x32 column-major 288.4 -> 311.8;
  // 2048^3 row-major level (366.6, 367.6). A blocked C only where K is
  // short (kStreamBlockedMaxK): its tiles are contiguous, the prefetchers
  // fetch them for ownership ahead of the stores, and from a K of about 96
  // the non-temporal stores cost more than those reads. Measured (Zen 5, 2
  // threads, `sfc-tune gemm M N K --layout L --dtype D --threads 2 --reps
  // 30`, the time of 5 alternations' mean, streaming -> not): blocked fp32
  // 2048^2 x 32 / 64 +10 / +7%, x 96 level, 4096x1024x96 -11%, K 128 and
  // 256 -1% to -8% (x 192 +4%), K 512-1024 level; bf16 2048^2 x 32 / 64 +26
  // / +2%, x 96 -16%, K 128 -9% to -17%, K 192-256 -2% to -11%; row- and
  // column-major (C's columns a leading dimension apart) -5% to +7% from K
  // = 80 on (bf16 2048^2 x 64 +12%), so they keep streaming.
  static constexpr std::size_t kStreamBytes = std::size_t(4) << 20;
  static constexpr std::int64_t kStreamBlockedMaxK = 64;
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
