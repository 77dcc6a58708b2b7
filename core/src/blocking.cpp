// The block-size rule: block_sizes() picks bm x bn x bk for a plan.
//
// Contract: each dimension D is cut into nb = ceil(D / target) blocks of equal
// size ceil(D / nb), so the padding is below one element per block; padded rows
// and columns are zeros written by packing, and every kernel call runs on full
// blocks with no edge code. A dimension below its target is one block of D.
// Targets live in sfc/arch_context.hpp; bf16 keeps bk even (VNNI pairs along K).
// Every regime below is a named exception with a one-line reason; the figures
// behind each are in docs/experiments/2026-12-07-figures-from-code-comments.md#block-sizes
// and the record linked.
//
// - bm in whole 64-byte vectors where M spans several blocks: a block ending on
//   part of a vector runs far slower for as many instructions
//   (docs/experiments/2026-12-03-whole-vector-blocks-xeon.md).
// - Tall tiles (bm up to 1024, at least kTallTilesPerThread per thread) for a K
//   of one block: the time goes into writing C, which tall tiles write in long
//   runs; on plain operands only while a row of the K block fits a cache line
//   (kTallRowBytes), and up to 64 in the blocked layout
//   (docs/experiments/2026-12-01-skinny-paths-xeon.md,
//   docs/experiments/2026-12-04-run-to-run-spread-zen5.md).
// - Tall tiles for one column of tiles on plain operands: A is packed panel by
//   panel inside the loop or read in place; the blocked layout keeps 64
//   (docs/experiments/2026-12-01-skinny-paths-xeon.md).
// - One column of 512-row tiles for a plain N of one to one and a half blocks,
//   where every thread gets two tiles of kOneColumnMinRows: one A block then
//   serves a whole column instead of two narrow ones; not on AMX tiles
//   (docs/experiments/2026-12-05-one-column-thin-m-zen5.md).
// - bf16 on one column wider than narrow_columns(), and bf16 row tasks: tiles of
//   kPackedPanelRows, so that a tile's C and its packed panel share L2
//   (docs/experiments/2026-12-05-one-column-thin-m-zen5.md,
//   docs/experiments/2026-12-05-row-tasks-zen5.md).
// - A tall block that does not divide M is rounded up to whole vectors of C; one
//   that divides M stays, since C in place cannot take padded rows.
// - Thin columns (bn = kThinTileColumns) where a thin M meets a B read in place:
//   B's columns a power-of-two leading dimension apart share one L1 set
//   (docs/experiments/2026-12-02-thin-kernels-zen5.md).
// - Plain operands take blocks that divide M, N and K when one lies between
//   half the target and the target: a divided K reads B in place in whole
//   blocks, a divided M and N keep C in place over rounds; bm only takes a
//   divisor of whole vectors (docs/experiments/2026-12-02-thin-kernels-zen5.md).
// - Wide tiles (bn = 2 x target) where the plain loop's M is three or four
//   blocks: each packed A block serves twice the columns in half the calls; the
//   blocked layout keeps 64
//   (docs/experiments/2026-12-04-small-grid-and-end-to-end-zen5.md).
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
  // packed operands): docs/experiments/2026-12-07-figures-from-code-comments.md#amx-k-steps
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
