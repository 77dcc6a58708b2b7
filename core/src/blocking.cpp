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
// Targets (the values live in sfc/arch_context.hpp): LIBXSMM's batch-reduce kernel on this AVX-512 Zen 5 runs
// at ~195-200 GFLOP/s per core in cache for bm, bn, bk in {32, 64} (fp32); 64 halves the number of kernel
// calls and loads of C per FLOP against 32, and one A block plus one B block (2 x 16 KiB fp32) still sits
// comfortably in L1/L2. bf16 keeps bk even: its A blocks are stored in VNNI pairs along K.
#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"

namespace sfc {
namespace {

int split(std::int64_t extent, int target) {
  const std::int64_t blocks = (extent + target - 1) / target;
  return static_cast<int>((extent + blocks - 1) / blocks);
}

}  // namespace

BlockSizes choose_blocks(const GemmShape& shape, DType dtype) {
  const DTypeConstants c = dtype_constants(dtype);
  BlockSizes b{split(shape.m, c.block_target_mn), split(shape.n, c.block_target_mn),
               split(shape.k, c.block_target_k)};
  b.bk += (c.bk_multiple - b.bk % c.bk_multiple) % c.bk_multiple;
  return b;
}

}  // namespace sfc
