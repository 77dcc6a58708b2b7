// The block-size rule.
//
// Each dimension D is cut into nb = ceil(D / target) blocks of equal size
// b = ceil(D / nb), so the padding is below one element per block (at most
// nb - 1 elements of D) instead of up to a whole block: for D = 1000 and a
// target of 64 this gives 16 blocks of 63 (pad 8) rather than 16 of 64 (pad 24).
// Padded rows and columns are zeros in the packed A and B, so the cost of a
// ragged shape is that sliver of extra FLOPs, and every kernel call runs on
// full blocks with no edge code. A dimension smaller than its target becomes a
// single block of exactly D (e.g. bm = 1 for M = 1).
//
// Except bm where M spans several blocks: the kernels vectorise along the
// loop's M, and a block that ends on part of a 64-byte vector ran far slower
// than one of whole vectors, though it executes as many vector instructions
// (LIBXSMM's fp32 kernel and the AMX one alike). So bm is rounded up to whole
// vectors, which never adds a block and pads at most a vector per block:
// D = 1000 gives 16 blocks of 64 (pad 24). Measured (2-core Xeon with AMX,
// 2 threads, sfc-tune gemm, mean of 20 cold runs, two alternating rounds; the
// loop's bm, rule -> whole vectors): fp32 row-major 3000x2000x700 (bm 63 ->
// 64) 316-326 -> 382-388 GFLOP/s, 6000x600x1100 (60 -> 64) 305-330 -> 377-387,
// blocked 2000x3000x700 (63 -> 64) 319-322 -> 349-359; bf16 on tiles,
// row-major 3000x2000x700 859-1021 -> 1340-1377.
//
// Targets (the values live in sfc/arch_context.hpp): LIBXSMM's batch-reduce kernel on the AVX-512 Zen 5 runs
// at ~195-200 GFLOP/s per core in cache for bm, bn, bk in {32, 64} (fp32) on one host, 232-249 (96-100% of
// its register-only FMA rate) on another (docs/experiments, 2026-12-05, kernel ceiling); 64 halves the
// number of kernel calls and loads of C per FLOP against 32, and one A block plus one B block (2 x 16 KiB
// fp32) still sits comfortably in L1/L2. bf16 keeps bk even: its A blocks are stored in VNNI pairs along K.
//
// Tall tiles (bm up to 1024, fewer only to keep kTallTilesPerThread tiles
// per thread) in two regimes where the 2D reuse of 64 x 64 tiles buys nothing:
//
// - A K that fits one block (K <= 64): there is no K loop to amortise, A and
//   B are slivers that stay in cache, and the time goes into writing C (M x N
//   elements for 2K FLOPs each). 64 x 64 tiles write C as 64 runs of 256
//   bytes a leading dimension apart, in the curve's 2D order; tall tiles
//   write it in runs of 4 KiB that follow each other down the columns.
//   Measured (fp32, 2 threads, Xeon, row-major, min of 5 alternating
//   processes; the loop's bm = 1024 against 64): 4096x4096x16 11.7 -> 4.6 ms,
//   2048x2048x32 3.0 -> 1.7, 1024x1024x3 0.68 -> 0.22, 1024x1024x64 0.87 ->
//   0.78; column-major 4096x4096x16 10.5 -> 4.6, blocked 5.3 -> 4.5.
//   On plain operands only while a row of the K block is at most a cache
//   line (kTallRowBytes: fp32 K <= 16, bf16 <= 32, fp64 <= 8, the last not
//   measured): past that the kernel's work per element of C outweighs
//   writing it, and (the likely reason) a tall tile's packed A, 1024 rows of
//   K, spills from L1 where a 64-row one stays. Measured
//   (Zen 5, 2 threads, `sfc-tune gemm M N K --layout L --blocks ...`, min of
//   20 cold runs, two alternated rounds, tall -> 64-wide tiles): fp32
//   row-major 1024x1024x64 0.41-0.44 -> 0.36 ms, 2048x2048x64 1.66-1.69 ->
//   1.41-1.48, 3000x2000x48 1.99-2.08 -> 1.56-1.61, 4091x4093x61 6.44-6.48
//   -> 5.85-6.07; column-major 5-15% the same way; 2048x2048x32 level (row
//   0.79-0.81 -> 0.76-0.80, column 0.70 -> 0.70-0.76); 4096x4096x16 tall
//   1.78-1.91 against 2.04-2.12, 1024x1024x3 0.11 against 0.13-0.14. bf16
//   row-major 3000x2000x48 0.93-0.95 -> 0.78-0.80, 2048x2048x64 0.77-0.83 ->
//   0.74-0.77, 2048x2048x32 tall 0.38-0.41 against 0.44; fp64 2048x2048x32
//   1.72-1.92 -> 1.50-1.58, 4096x4096x16 3.78-3.86 -> 3.49-3.53. The blocked
//   layout keeps tall tiles up to 64 (fp32 1024x1024x64 0.36 against
//   0.40-0.42, 2048x2048x64 1.49-1.55 against 1.69-1.73). The Xeon numbers
//   above favoured tall tiles at K = 32-64 on an older engine; not measured
//   again there.
// - Plain operands and an N that fits one block: one column of tiles, whose
//   A panels gemm() packs inside the loop (plan_impl.hpp, Impl::panels_a;
//   a tight A is read in place instead: all_in_place_map)
//   reading the caller's matrix in runs of bm elements. Measured (row-major,
//   so the caller's M is the loop's N; min of 3 alternating processes):
//   1x4096x4096 9.5 -> 5.4 ms, 8x4096x4096 9.1 -> 5.8, 32x2048x2048 3.3 ->
//   2.4, 64x8192x1024 11.8 -> 8.2, 3x1024x1024 0.57 -> 0.35 (bm 512: two
//   tiles, one per thread, beat one of 1024, 0.36 against 0.52 ms). The
//   blocked layout keeps 64: its packed A is contiguous already, and 1024-row
//   blocks ran 4096x8x4096 at 2.8x the time.
// - Plain operands and an N of one to one and a half blocks (fp32 and bf16
//   65-96, fp64 33-48): the usual rule cuts it into two narrow columns of
//   tiles (two of 33-48 columns) and packs all of A up front, though each A
//   block then serves only two tiles. One column of tiles instead, as above
//   (A read in place where it can be, else packed panel by panel), in tiles of
//   512 rows (a 512 x 96 fp32 tile of C is 192 KiB: with a K block of A it
//   stays in L2, where 1024 rows did not), where every thread gets two tiles
//   of at least kOneColumnMinRows (loop M >= 1024 on 2 threads; shorter, the
//   64-row tiles read in place were no faster: N = 256, 512 level). Not on
//   AMX tiles (not measured there). Measured (Zen 5, 2 threads, `sfc-tune
//   bench --layout L --vs onednn --config policy --threads 2 --reps 5
//   --passes 3 --min-time 0.05`, the binaries before and after alternated
//   twice, WHM over oneDNN's): fp32 row-major on data/grids/thin-m.shapes
//   (caller's M 65-96 by N x K of 1024-8192, 30 shapes) 0.79-0.81 ->
//   0.92-0.93 (65x1024x4096 0.75-0.78 -> 1.06), column-major (12 shapes)
//   0.71 -> 0.87-0.90; bf16 row-major, M 72 and 96 (10 shapes) 0.77 ->
//   0.84-0.89; fp64, M 40 and 48 (10 shapes, `--config best`, against the
//   better of oneDNN and OpenBLAS) 0.87-0.91 -> 1.24. Wider, two columns
//   stay: one column ran M 112 at 0.94 against 0.91, M 128 at 0.89 against
//   0.92 (6 shapes each, one run, `--config best`), mixed shape by shape;
//   over a large A they now run as row tasks (plan_impl.hpp, Impl::row_span),
//   which in turn lost to one column where this rule takes it (72x8192x1024
//   291-305 against 330-337 GFLOP/s).
// - bf16 on one column of tiles wider than the narrow kernel takes (more than
//   narrow_columns(): 12 on AVX512-BF16), on LIBXSMM: its kernels need A in
//   VNNI pairs, so the loop packs A panel by panel (plan_impl.hpp,
//   Impl::panels_a), and there tiles of at most kPackedPanelRows ran best,
//   the tall ones worst (the likely reason: a 1024-row tile's C is 256 KiB of
//   fp32 beside a 256 KiB panel in L2). Not measured on AMX tiles. Measured
//   (Zen 5, row-major, `sfc-tune gemm M N K --dtype bf16 --layout row
//   --threads 2 --reps 10 --blocks 0xROWSx0`, min of two rounds, ms, rows
//   1024 / 512 / 256 / 128 / 64): 64x8192x1024 3.22 / 2.33 / 2.17 / 2.11 /
//   2.37, 64x4096x4096 6.68 / 4.87 / 4.65 / 4.27 / 4.94, 32x4096x4096 4.53 /
//   3.38 / 3.09 / 2.95 / 3.61, 16x2048x2048 0.92 / 0.65 / 0.58 / 0.54, and
//   one column of 96, 96x4096x4096 (512 / 256 / 128 / 64) 7.09 / 6.36 / 6.08 /
//   7.04. Side by side with oneDNN's bf16 (`sfc-tune bench --dtype bf16
//   --layout row --vs onednn --config policy`, alternated twice): M 16-64 by N
//   x K of 1024-8192 (16 shapes) WHM 0.64-0.66 -> 0.84-0.85.
// - bf16 where the plan runs row tasks (2-8 columns of tiles on plain
//   operands, an A of 8 MiB or more: plan_impl.hpp, Impl::row_span): tiles of
//   128 rows, where every thread still gets kRowTasksPerThread rows of them.
//   Not fp32 (level to behind), not on AMX tiles (not measured there).
//   Measured (Zen 5, 2 threads, `sfc-tune bench --shapes
//   data/grids/row-tasks.shapes --layout row --dtype bf16 --vs onednn
//   --config policy`, 64 and 128 rows alternated twice, WHM over oneDNN's
//   bf16): 0.892 / 0.960 -> 0.966 / 1.004 (128x4096x4096 537-591 -> 598-668
//   GFLOP/s, 384x4096x4096 660-689 -> 732-787); fp32 1.015 / 1.030 -> 1.005 /
//   0.994.
// A tall block that does not divide M (the last one is padded anyway) is
// rounded up to whole 64-byte vectors of C, which leaves the number of blocks
// as it is: LIBXSMM's kernel for 1023 rows ran 4091x4093x61 (fp32, 2 threads,
// median of 5 interleaved runs of 10) blocked at 199.7 GFLOP/s and
// column-major at 252.8, for 1024 rows at 287.3 and 302.7. A block that
// divides M stays (1000x1000x32 column-major, when it took tall tiles: 227.2
// in one block of 1000, 169.5 in one of 1008, whose padded rows C in place
// cannot take).
//
// Thin columns (bn = kThinTileColumns) where a thin M (at most half a block:
// one row of tiles of one or two vectors) meets a B read in place (plain
// operands): LIBXSMM broadcasts B from every column of a
// register block of C -- the thinner M, the more columns it blocks
// -- and a B read in place has its columns a leading dimension apart, which at
// a power of two all fall in one L1 set. Measured (fp32 row-major, so the
// loop's M is the caller's N; median of 5 interleaved runs of 10, GFLOP/s,
// bn 64 -> 8): 4096x16x4096 84.4 -> 191.0 (bf16 154.9 -> 227.7), 2048x32x2048
// 241.4 -> 293.9, but 8192x64x1024 342.2 -> 307.2 (four vectors of M: a
// block of few columns), which keeps 64.
//
// Plain operands take blocks that divide M, N and K where such a block lies
// between half the target and the target (K = 700: 50, 1100: 55, M = 6000:
// 48, N = 6000: 60; a prime keeps its padded blocks): a divided K reads B -- and with one
// column of tiles A -- in place in whole blocks (a ragged one ends each task
// on a shorter block, a kernel call of its own; bf16 cannot where it is odd),
// and only a divided M and N keep C in place over several rounds
// (plan_impl.hpp). bm, the dimension the
// kernel vectorises, only takes a divisor of whole 64-byte vectors: 2000 in
// blocks of 50 (3 vectors and 2 lanes) ran bf16 3000x2000x700 row-major at
// 537 GFLOP/s against 627 in blocks of 63. Measured (row-major
// fp32, median of 5 interleaved runs of 10, GFLOP/s): bk 64 padded -> a
// divisor, (1,1): 3000x2000x700 341.6 -> 353.6, 1500x3500x800 339.6 -> 352.4,
// 6000x600x1100 308.3 -> 331.1; and then the last's bm 64 -> 60 (6000 =
// 100 x 60): (1,2) 324.0 -> 342.1, (1,1) 359.0 -> 363.9.
//
// Wide tiles (bn = 128, twice the target) where the operands are plain and the
// loop's M spans three or four blocks (a row-major N, a column-major M of
// 129-256): B is read in place, and a tile twice as wide reuses each packed
// A block over twice the columns in one kernel call, with half the calls.
// Measured (Zen 5, 2 threads, `sfc-tune gemm M N K --layout L --blocks ...`,
// min of 40 cold runs, two alternated rounds, GFLOP/s, geometric mean of the
// gain): fp32 row-major N = 256, M and K in 256..2048 (16 shapes) 1.031
// (0.986-1.082; 512x256x1024 347 -> 364-384, 512x256x512 334-348 -> 364-374),
// column-major M = 256 (8 shapes) 1.026 (0.985-1.064), bf16 row-major N = 256
// (5 shapes) 1.00-1.05, f64 column-major M = 96-128 (bn 32 -> 64) 0.96-1.09;
// a loop M of 512 1.011, of 1024-2048 1.008, of 128 0.98-1.01, so the rule
// stops at four blocks. The blocked layout, whose B is
// packed, lost with them (256x512x1024 372-378 -> 350-365), and keeps 64.
#include <algorithm>

#include "amx_brgemm.hpp"
#include "plan_impl.hpp"
#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"
#include "simd_kernel.hpp"

namespace sfc {
namespace {

// Tall tiles for a K of one block on plain operands only where a row of the
// K block is at most this many bytes (see above).
constexpr std::size_t kTallRowBytes = 64;

// Wide tiles (bn twice the target) only where each thread still gets this
// many: a 256 x 256 call on 2 threads keeps 8 tiles, 4 a thread.
constexpr std::int64_t kWideTilesPerThread = 4;

// One column of tiles for a loop N of 1-1.5 blocks only where each of
// kTallTilesPerThread tiles a thread gets has at least this many rows (see
// above).
constexpr int kOneColumnMinRows = 256;

// Tiles of one column whose bf16 A the loop packs panel by panel are this
// many rows at most (see above).
constexpr int kPackedPanelRows = 128;

// bf16 tiles of row tasks (plan_impl.hpp, Impl::row_span) are this many
// rows (see above).
constexpr int kRowTaskRows = 128;

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

int split(std::int64_t extent, int target) {
  const std::int64_t blocks = (extent + target - 1) / target;
  return static_cast<int>((extent + blocks - 1) / blocks);
}

// The largest multiple of `multiple` in [target / 2, target] that divides
// `extent`, or `size` if none does or `size` divides it already.
int divisor_or(int size, std::int64_t extent, int target, int multiple) {
  if (extent % size == 0) return size;
  for (int d = target / multiple * multiple; d >= target / 2; d -= multiple)
    if (extent % d == 0) return d;
  return size;
}

}  // namespace

GemmShape loop_shape(const GemmShape& shape, Layout layout) {
  return layout == Layout::row_major ? GemmShape{shape.n, shape.m, shape.k} : shape;
}

bool c_in_place_over_rounds(const GemmShape& loop, const BlockSizes& blocks) {
  return (loop.m % blocks.bm == 0 && loop.n % blocks.bn == 0) || loop.n <= blocks.bn;
}

BlockSizes choose_blocks(const GemmShape& shape, DType dtype, int threads, Layout layout) {
  const DTypeConstants c = dtype_constants(dtype);
  const bool plain = layout != Layout::blocked;  // row- or column-major operands
  BlockSizes b{split(shape.m, c.block_target_mn), split(shape.n, c.block_target_mn),
               split(shape.k, c.block_target_k)};
  b.bk = round_up(b.bk, c.bk_multiple);
  // bm, the dimension the kernels vectorise, in whole 64-byte vectors where
  // M spans several blocks (see above).
  const int vector = int(64 / c.output_bytes);
  if (shape.m > b.bm) b.bm = round_up(b.bm, vector);
  // bf16 on AMX tiles: one tile product contracts 32 of K, and a bk of no
  // multiple of 32 runs every product on a smaller step (bk 62: steps of 2,
  // a sixteenth of the rate). K is padded to whole steps instead (zeros in the
  // packed operands). Row-major, min of 2 alternating runs: 1500x3500x800
  // (bk 62 -> 64) 128 -> 23 ms, 6000x600x1100 139 -> 22.6 ms.
  const bool amx_steps = dtype == DType::bf16 && b.bk > 32 && amx_available();
  if (amx_steps) b.bk = round_up(b.bk, 32);
  if (plain) {                                                    // divisors (see above)
    b.bm = divisor_or(b.bm, shape.m, c.block_target_mn, vector);  // whole vectors
    b.bn = divisor_or(b.bn, shape.n, c.block_target_mn, 1);
    if (!amx_steps) b.bk = divisor_or(b.bk, shape.k, c.block_target_k, c.bk_multiple);
  }
  // Wide tiles where a B read in place meets a loop M of three or four blocks,
  // while every thread keeps kWideTilesPerThread of them (see above); not for
  // a K of one block, whose tall tiles were measured on the usual width.
  const int wide = 2 * c.block_target_mn;
  const std::int64_t row_blocks = (shape.m + b.bm - 1) / b.bm;
  const bool wide_tiles =
      plain && shape.k > c.block_target_k && row_blocks > 2 && row_blocks <= 4 &&
      row_blocks * ((shape.n + wide - 1) / wide) >= kWideTilesPerThread * std::max(threads, 1);
  if (wide_tiles) b.bn = divisor_or(split(shape.n, wide), shape.n, wide, 1);
  const bool thin_m_b_in_place = plain && shape.m <= c.block_target_mn / 2;
  if (thin_m_b_in_place) b.bn = split(shape.n, kThinTileColumns);  // (see above)
  // Plain operands: only a K block of at most a cache line a row (see above).
  const bool one_k_block =
      shape.k <= c.block_target_k && (!plain || std::size_t(shape.k) * c.input_bytes <= kTallRowBytes);
  // One column of 512-row tiles where the loop's N would make two narrow
  // ones, on a loop M long enough for them (see above).
  const int one_column_rows = c.block_target_m_tall / 2;
  const bool one_column =
      plain && shape.n > c.block_target_mn && shape.n <= c.block_target_mn * 3 / 2 &&
      shape.m >= std::int64_t(kOneColumnMinRows) * kTallTilesPerThread * std::max(threads, 1) &&
      !(dtype == DType::bf16 && amx_available());
  if (one_column) b.bn = int(shape.n);
  // bf16 row tasks on tiles of twice the rows, where each thread gets its
  // share of them (see above).
  const bool tall_row_tasks =
      plain && dtype == DType::bf16 && !amx_available() && !one_column &&
      GemmPlan::Impl::row_tasks_pay(
          (shape.n + c.block_target_mn - 1) / c.block_target_mn, shape.m / kRowTaskRows,
          std::size_t(shape.m) * std::size_t(shape.k) * c.input_bytes, std::max(threads, 1), dtype);
  if (tall_row_tasks) {
    b.bm = split(shape.m, kRowTaskRows);
    if (shape.m % b.bm != 0) b.bm = round_up(b.bm, vector);  // whole vectors (see above)
  }
  const bool plain_panels = plain && (shape.n <= c.block_target_mn || one_column);
  if (one_k_block || plain_panels) {  // tall tiles (see above)
    const std::int64_t col_tiles = (shape.n + b.bn - 1) / b.bn;
    const std::int64_t wanted = std::int64_t(kTallTilesPerThread) * std::max(threads, 1);
    // An A the loop packs panel by panel, whatever the call: short tiles (see above).
    const bool packed_panels =
        plain_panels && !one_k_block && !amx_available() && !one_column_reads_a_in_place(dtype, b.bn);
    const int tallest = packed_panels ? kPackedPanelRows
                        : one_column  ? one_column_rows
                                      : c.block_target_m_tall;
    for (int target = tallest; target > c.block_target_mn; target /= 2) {
      const std::int64_t row_tiles = (shape.m + target - 1) / target;
      if (row_tiles * col_tiles >= wanted) {
        b.bm = split(shape.m, target);
        if (shape.m % b.bm != 0) b.bm = round_up(b.bm, vector);  // whole vectors (see above)
        break;
      }
    }
  }
  return b;
}

}  // namespace sfc
