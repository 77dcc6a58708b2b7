// Row tasks (GemmPlan::Impl::row_span): with a few columns of tiles on plain
// operands each task is a whole row of tiles, whose A panel the thread packs
// into its own buffer and multiplies into the row's tiles while it is in L2.
// Asked by decide() with the plan's grid, and by the block rule before it has
// its blocks. Private to core/.
#pragma once
#include <cstddef>
#include <cstdint>

#include "sfc/gemm.hpp"

namespace sfc {

// At most this many columns of tiles: each A block then serves the nb tiles
// of its row (docs/experiments/2026-12-05-row-tasks-zen5.md).
inline constexpr std::int64_t kRowTaskColumns = 8;
// An A of at least this many bytes: smaller ones stay in cache when packed up front.
inline constexpr std::size_t kRowTaskMinBytes = std::size_t(8) << 20;
// And only where every thread gets this many rows (layers count: each is a
// task of its own), so that fewer tasks than tiles leave no thread idle.
inline constexpr std::int64_t kRowTasksPerThread = 4;

// Whether row tasks pay for `columns` columns of tiles, `rows` tasks (rows of
// tiles times layers) on `threads`, over an A of `a_bytes` in `dtype`. Fewer
// rows than kRowTasksPerThread a thread, but the same number for every
// thread, take row tasks whatever A's size (fp32 and fp64: each thread then
// packs and reads its own rows from its L2 instead of the others' through
// the L3; docs/experiments/2026-12-06-few-rows-zen5.md).
inline bool row_tasks_pay(std::int64_t columns, std::int64_t rows, std::size_t a_bytes, int threads,
                          DType dtype) {
  if (columns <= 1 || columns > kRowTaskColumns) return false;
  if (rows >= kRowTasksPerThread * threads) return a_bytes >= kRowTaskMinBytes;
  return dtype != DType::bf16 && rows >= threads && rows % threads == 0;
}

}  // namespace sfc
