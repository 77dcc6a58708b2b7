// The block-size rule: choose_blocks() picks bm x bn x bk for a plan.
//
// Contract: each dimension D is cut into nb = ceil(D / target) blocks of equal
// size ceil(D / nb), so the padding is below one element per block; padded rows
// and columns are zeros written by packing, and every kernel call runs on full
// blocks with no edge code. A dimension below its target is one block of D.
// Targets live in sfc/arch_context.hpp; bf16 keeps bk even (VNNI pairs along K).
// Every exception is a named regime (BlockStrategy, sfc/plan_decision.hpp),
// applied in the order of kStrategies below, each with a one-line reason and
// the record that chose it; the figures are in
// docs/experiments/2026-12-07-figures-from-code-comments.md#block-sizes.
// A block the regimes make taller than its target is rounded up to whole
// vectors of C unless it divides M (C in place cannot take padded rows), and
// a divisor taken for bm is a whole number of vectors.
// The rule reads the machine only through ArchContext.
#include <algorithm>

#include "amx_brgemm.hpp"
#include "row_tasks.hpp"
#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"
#include "sfc/plan_decision.hpp"
#include "simd_kernel.hpp"

namespace sfc {
namespace {

constexpr std::string_view kFigures = "docs/experiments/2026-12-07-figures-from-code-comments.md#block-sizes";

// One entry per BlockStrategy, in its order.
constexpr BlockStrategyInfo kStrategies[kBlockStrategyCount] = {
    {"target_split", "each dimension in equal blocks near the dtype's target (sfc/arch_context.hpp)",
     kFigures},
    {"whole_vectors", "bm in whole 64-byte vectors: a block ending on part of a vector runs far slower",
     "docs/experiments/2026-12-03-whole-vector-blocks-xeon.md"},
    {"amx_k_steps", "bf16 on AMX tiles: a bk of no multiple of 32 runs every tile product on a smaller step",
     "docs/experiments/2026-12-07-figures-from-code-comments.md#amx-k-steps"},
    {"divisors",
     "plain operands: a divided K reads B in place in whole blocks, a divided M and N keep C in place over "
     "rounds",
     "docs/experiments/2026-12-02-thin-kernels-zen5.md"},
    {"wide_tiles", "a loop M of three or four blocks: each packed A block serves twice the columns",
     "docs/experiments/2026-12-04-small-grid-and-end-to-end-zen5.md"},
    {"thin_columns",
     "a thin M on a B read in place: B's columns a power-of-two leading dimension apart share one L1 set",
     "docs/experiments/2026-12-02-thin-kernels-zen5.md"},
    {"one_column", "a plain loop N of one to one and a half blocks: one A block serves a whole column",
     "docs/experiments/2026-12-05-one-column-thin-m-zen5.md"},
    {"row_task_rows", "bf16 row tasks: tiles of 128 rows, so that a tile's C and its packed panel share L2",
     "docs/experiments/2026-12-05-row-tasks-zen5.md"},
    {"tall_tiles", "a K of one block or one column of tiles: tall tiles write C in long runs",
     "docs/experiments/2026-12-01-skinny-paths-xeon.md"},
    {"packed_panel_rows",
     "one column whose A the loop packs panel by panel: a tile's C and its panel share L2",
     "docs/experiments/2026-12-05-one-column-thin-m-zen5.md"},
    {"requested", "PlanRequest::blocks named it", ""},
};

// Tall tiles for a K of one block on plain operands only where a row of the
// K block is at most a cache line (docs/experiments/2026-12-04-run-to-run-spread-zen5.md).
constexpr std::size_t kTallRowBytes = 64;

// Wide tiles (bn twice the target) only where each thread still gets this
// many: a 256 x 256 call on 2 threads keeps 8 tiles, 4 a thread.
constexpr std::int64_t kWideTilesPerThread = 4;

// One column of tiles for a loop N of 1-1.5 blocks only where each of
// kTallTilesPerThread tiles a thread gets has at least this many rows.
constexpr int kOneColumnMinRows = 256;

// Tiles of one column whose bf16 A the loop packs panel by panel are this
// many rows at most (BlockStrategy::packed_panel_rows).
constexpr int kPackedPanelRows = 128;

// bf16 tiles of row tasks (row_tasks.hpp) are this many rows.
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

// The rule's blocks so far and the regimes that changed them.
struct Choice {
  BlockChoice c;
  // Sets `size` to `value`, recording `why` if that changes it.
  void set(int& size, int value, BlockStrategy why) {
    if (size == value) return;
    size = value;
    c.strategy = why;
    c.regimes |= 1u << unsigned(why);
  }
};

}  // namespace

const BlockStrategyInfo& block_strategy_info(BlockStrategy strategy) {
  return kStrategies[std::min(unsigned(strategy), kBlockStrategyCount - 1)];
}
std::string_view to_string(BlockStrategy strategy) { return block_strategy_info(strategy).name; }

GemmShape loop_shape(const GemmShape& shape, Layout layout) {
  return layout == Layout::row_major ? GemmShape{shape.n, shape.m, shape.k} : shape;
}

bool c_in_place_over_rounds(const GemmShape& loop, const BlockSizes& blocks) {
  return (loop.m % blocks.bm == 0 && loop.n % blocks.bn == 0) || loop.n <= blocks.bn;
}

BlockSizes choose_blocks(const GemmShape& shape, DType dtype, int threads, Layout layout) {
  // The rule reads only these two of the machine (no thread count, no system call).
  ArchContext arch;
  arch.amx_tiles = amx_available();
  arch.narrow_bf16_columns = narrow_columns<libxsmm_bfloat16>();
  return choose_block_strategy(shape, dtype, threads, layout, arch).blocks;
}

BlockChoice choose_block_strategy(const GemmShape& shape, DType dtype, int threads, Layout layout,
                                  const ArchContext& arch) {
  using S = BlockStrategy;
  const DTypeConstants c = dtype_constants(dtype);
  const bool plain = layout != Layout::blocked;  // row- or column-major operands
  Choice choice;
  BlockSizes& b = choice.c.blocks;
  b = {split(shape.m, c.block_target_mn), split(shape.n, c.block_target_mn),
       split(shape.k, c.block_target_k)};
  b.bk = round_up(b.bk, c.bk_multiple);
  const int vector = int(64 / c.output_bytes);
  if (shape.m > b.bm) choice.set(b.bm, round_up(b.bm, vector), S::whole_vectors);
  const bool amx_steps = dtype == DType::bf16 && b.bk > 32 && arch.amx_tiles;
  if (amx_steps) choice.set(b.bk, round_up(b.bk, 32), S::amx_k_steps);
  if (plain) {
    choice.set(b.bm, divisor_or(b.bm, shape.m, c.block_target_mn, vector), S::divisors);  // whole vectors
    choice.set(b.bn, divisor_or(b.bn, shape.n, c.block_target_mn, 1), S::divisors);
    if (!amx_steps) choice.set(b.bk, divisor_or(b.bk, shape.k, c.block_target_k, c.bk_multiple), S::divisors);
  }
  // Not for a K of one block, whose tall tiles were measured on the usual width.
  const int wide = 2 * c.block_target_mn;
  const std::int64_t row_blocks = (shape.m + b.bm - 1) / b.bm;
  const bool wide_tiles =
      plain && shape.k > c.block_target_k && row_blocks > 2 && row_blocks <= 4 &&
      row_blocks * ((shape.n + wide - 1) / wide) >= kWideTilesPerThread * std::max(threads, 1);
  if (wide_tiles) choice.set(b.bn, divisor_or(split(shape.n, wide), shape.n, wide, 1), S::wide_tiles);
  const bool thin_m_b_in_place = plain && shape.m <= c.block_target_mn / 2;
  if (thin_m_b_in_place) choice.set(b.bn, split(shape.n, kThinTileColumns), S::thin_columns);
  const bool one_k_block =
      shape.k <= c.block_target_k && (!plain || std::size_t(shape.k) * c.input_bytes <= kTallRowBytes);
  const int one_column_rows = c.block_target_m_tall / 2;
  const bool one_column =
      plain && shape.n > c.block_target_mn && shape.n <= c.block_target_mn * 3 / 2 &&
      shape.m >= std::int64_t(kOneColumnMinRows) * kTallTilesPerThread * std::max(threads, 1) &&
      !(dtype == DType::bf16 && arch.amx_tiles);
  if (one_column) choice.set(b.bn, int(shape.n), S::one_column);
  const bool tall_row_tasks =
      plain && dtype == DType::bf16 && !arch.amx_tiles && !one_column &&
      row_tasks_pay((shape.n + c.block_target_mn - 1) / c.block_target_mn, shape.m / kRowTaskRows,
                    std::size_t(shape.m) * std::size_t(shape.k) * c.input_bytes, std::max(threads, 1), dtype);
  if (tall_row_tasks) {
    const int rows = split(shape.m, kRowTaskRows);
    choice.set(b.bm, shape.m % rows != 0 ? round_up(rows, vector) : rows, S::row_task_rows);  // whole vectors
  }
  const bool plain_panels = plain && (shape.n <= c.block_target_mn || one_column);
  if (one_k_block || plain_panels) {
    const std::int64_t col_tiles = (shape.n + b.bn - 1) / b.bn;
    const std::int64_t wanted = std::int64_t(kTallTilesPerThread) * std::max(threads, 1);
    // An A the loop packs panel by panel, whatever the call: short tiles.
    const bool packed_panels = plain_panels && !one_k_block && !arch.amx_tiles && dtype == DType::bf16 &&
                               b.bn > arch.narrow_bf16_columns;  // (one_column_reads_a_in_place)
    const int tallest = packed_panels ? kPackedPanelRows
                        : one_column  ? one_column_rows
                                      : c.block_target_m_tall;
    for (int target = tallest; target > c.block_target_mn; target /= 2) {
      const std::int64_t row_tiles = (shape.m + target - 1) / target;
      if (row_tiles * col_tiles >= wanted) {
        const int rows = split(shape.m, target);
        choice.set(b.bm, shape.m % rows != 0 ? round_up(rows, vector) : rows,  // whole vectors
                   packed_panels ? S::packed_panel_rows : S::tall_tiles);
        break;
      }
    }
  }
  return choice.c;
}

}  // namespace sfc
