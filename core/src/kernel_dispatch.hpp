// Kernel dispatch: the batch-reduce kernels of every operand map a plan's
// decision names (PlanDecision::*_kernels), generated once when the plan is
// built; the loop only calls them. Private to core/.
#pragma once
#include "plan_impl.hpp"

namespace sfc {

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

// Fills the plan's operand maps (blocked_map, and for plain operands the
// in-place maps the decision names) with their addressing and kernels, and
// the transpose kernels of packing. Throws sfc::Error where the CPU has no
// kernel for the plan's dtype.
void build_kernels(GemmPlan::Impl& p);

}  // namespace sfc
