// Kernel dispatch (kernel_dispatch.hpp): LIBXSMM's kernels and core's own,
// for every operand map a plan's decision names, generated when it is built.
#include "kernel_dispatch.hpp"

#include <memory>
#include <string>
#include <type_traits>

#include <libxsmm_generator.h>  // libxsmm_trans_descriptor_init

namespace sfc {
namespace {

// Core's own kernels (simd_kernel.hpp) for every tile of `map`: the narrow
// kernel, or the single-row one.
template <class Kernel>
bool dispatch_simd(TileKernels<Kernel>& k, const BlockSizes& b, const Addressing& at, libxsmm_blasint lda,
                   libxsmm_blasint ldb, libxsmm_blasint ldc, bool narrow) {
  return dispatch(k, b, at, [&](int m, int n, bool accumulate) {
    const decltype(Kernel::simd) s{.m = m,
                                   .n = n,
                                   .bk = b.bk,
                                   .stride_a = at.a_k_block,
                                   .stride_b = at.b_k_block,
                                   .lda = lda,
                                   .ldb = ldb,
                                   .ldc = ldc,
                                   .accumulate = accumulate};
    return Kernel{.simd = narrow ? narrow_kernel(s) : single_row_kernel(s)};
  });
}

// LIBXSMM's plain kernels, called block by block (BlockByBlock), for blocks of
// `b` addressed as `at`.
template <class Kernel, class Function, class Scalar>
bool dispatch_by_block(TileKernels<Kernel>& k,
                       Function (*make)(libxsmm_blasint, libxsmm_blasint, libxsmm_blasint,
                                        const libxsmm_blasint*, const libxsmm_blasint*,
                                        const libxsmm_blasint*, const Scalar*, const Scalar*, const int*,
                                        const int*),
                       const BlockSizes& b, const Addressing& at, libxsmm_blasint lda, libxsmm_blasint ldb,
                       libxsmm_blasint ldc) {
  const Scalar alpha = 1, beta0 = 0, beta1 = 1;
  const int flags = 0;
  return dispatch(k, b, at, [&](libxsmm_blasint m, libxsmm_blasint n, bool accumulate) {
    Kernel kernel;
    kernel.by_block = {
        .first = accumulate ? nullptr : make(m, n, b.bk, &lda, &ldb, &ldc, &alpha, &beta0, &flags, nullptr),
        .rest = make(m, n, b.bk, &lda, &ldb, &ldc, &alpha, &beta1, &flags, nullptr),
        .stride_a = at.a_k_block,
        .stride_b = at.b_k_block};
    if (!accumulate && !kernel.by_block.first) kernel.by_block.rest = nullptr;  // none: not a kernel
    return kernel;
  });
}

// Builds the kernels of `map` for the plan's dtype; false if there are none.
// A loop M of 1 (lda = bm = 1) takes the single-row kernel: LIBXSMM would run
// it on one lane; of 2 in fp32 and fp64, its two-row form, where LIBXSMM ran
// slower than on 3 rows
// (docs/experiments/2026-12-07-figures-from-code-comments.md#two-row-tiles). `narrow`: the map
// reads a plain A in place, one column of tiles no wider than
// narrow_columns(), and takes the narrow kernel.
// `by_block`: LIBXSMM's plain kernels, one K block per call (fp32 and fp64;
// see Impl::all_in_place_map). `k_tail`:
// the map reads an operand in place along K, and K has a shorter last block
// (Impl::k_tail), whose kernels are built too.
bool dispatch_kernels(const GemmPlan::Impl& p, OperandMap& map, libxsmm_blasint lda, libxsmm_blasint ldb,
                      libxsmm_blasint ldc, bool narrow = false, bool k_tail = false, bool by_block = false) {
  // Streaming kernels only where the loop can use them: a map with a shorter
  // last K block never streams (run_sfc_ca), nor do its tail kernels.
  const auto fill = [&](auto& kernels, const BlockSizes& b, bool streaming) -> bool {
    using Kernel = std::remove_cvref_t<decltype(kernels[0][0].first)>;
    // One row, or two interleaved along K (fp32 and fp64; bf16's packed A is
    // in VNNI pairs): core's row kernels.
    const bool rows = lda == 1 || (lda == 2 && !std::is_same_v<Kernel, Bf16Kernel>);
    if (rows || narrow) return dispatch_simd(kernels, b, map.at, lda, ldb, ldc, !rows);
    if constexpr (std::is_same_v<Kernel, F32Kernel>) {
      if (by_block) return dispatch_by_block(kernels, libxsmm_smmdispatch, b, map.at, lda, ldb, ldc);
      return dispatch_libxsmm(kernels, libxsmm_smmdispatch_reducebatch_strd, b, map.at, lda, ldb, ldc,
                              input_size(p.dtype), 0, streaming);
    } else if constexpr (std::is_same_v<Kernel, F64Kernel>) {
      if (by_block) return dispatch_by_block(kernels, libxsmm_dmmdispatch, b, map.at, lda, ldb, ldc);
      return dispatch_libxsmm(kernels, libxsmm_dmmdispatch_reducebatch_strd, b, map.at, lda, ldb, ldc,
                              input_size(p.dtype), 0, streaming);
    } else {
      if (p.amx)
        return dispatch(kernels, b, map.at, [&](int m, int n, bool accumulate) {
          return Bf16Kernel{.amx = std::make_shared<const AmxBrgemm>(
                                m, n, b.bk, map.at.a_k_block, map.at.b_k_block, lda, ldb, ldc, accumulate)};
        });
      return dispatch_libxsmm(kernels, libxsmm_bsmmdispatch_reducebatch_strd, b, map.at, lda, ldb, ldc,
                              input_size(p.dtype), LIBXSMM_GEMM_FLAG_VNNI_A, streaming);
    }
  };
  const BlockSizes tail_blocks{p.blocks.bm, p.blocks.bn, p.k_tail};
  const auto both = [&](auto& kernels, auto& tails) {
    map.tail = k_tail && p.k_tail > 0;
    return fill(kernels, p.blocks, p.stream_c && !map.tail) && (!map.tail || fill(tails, tail_blocks, false));
  };
  switch (p.dtype) {
    case DType::f32: return map.ready = both(map.f32, map.f32_tail);
    case DType::f64: return map.ready = both(map.f64, map.f64_tail);
    case DType::bf16: return map.ready = both(map.bf16, map.bf16_tail);
  }
  return false;
}

}  // namespace

void build_kernels(GemmPlan::Impl& p) {
  const PlanDecision& d = p.decision;
  libxsmm_init();
  const std::int64_t bm = p.blocks.bm, bn = p.blocks.bn, bk = p.blocks.bk;
  const std::int64_t a_block = bm * bk, b_block = bk * bn, c_block = bm * bn;
  const bool b_in_columns = d.b_in_columns;  // (see Impl::packed_b_ld)
  p.blocked_map.at = {.a_row_block = p.kb * a_block,
                      .a_k_block = a_block,
                      .b_col_block = p.kb * b_block,
                      .b_k_block = b_in_columns ? bk : b_block,
                      .c_row_block = c_block,
                      .c_col_block = p.mb * c_block,
                      .c_column = bm,
                      .c_copy = std::int64_t(p.c_elements()),
                      .last_rows = int(bm),
                      .last_cols = int(bn)};
  const bool ok = dispatch_kernels(p, p.blocked_map, libxsmm_blasint(bm), libxsmm_blasint(p.packed_b_ld),
                                   libxsmm_blasint(bm));
  // Plain matrices in place, in the loop's column-major terms (a row-major
  // plan's problem is the transpose): A is m x k, B k x n, C m x n. A is what
  // the kernel re-reads (once per group of C columns), so it stays packed: a
  // block's columns in a plain matrix lie a leading dimension apart, and at a
  // power of two they share a few cache sets. B is streamed by broadcasts, a
  // few columns at a time, and C is touched once per round, so both are fine
  // in place.
  // A ragged M or N need not copy C: the last row (column) of tiles runs
  // kernels of the rows (columns) left, on the zero-padded packed A (B). It
  // pays with one round, not with several: each round reads and writes the
  // thread's C tiles again, and columns that start off a cache line cost more
  // to re-read than a contiguous block. One column of tiles is the exception
  // (c_in_place_over_rounds): its C, at most a block wide, is small beside the
  // A that copying would stream through memory twice more
  // (docs/experiments/2026-12-01-ragged-in-place-xeon.md; figures:
  // docs/experiments/2026-12-07-figures-from-code-comments.md#plain-matrices-in-place).
  const GemmShape& s = p.shape;
  if (d.c_in_place_kernels != KernelFamily::none) {
    Addressing c_in_place = p.blocked_map.at;
    c_in_place.c_row_block = bm;
    c_in_place.c_col_block = bn * s.m;
    c_in_place.c_column = s.m;
    c_in_place.c_copy = s.m * s.n;
    c_in_place.last_rows = int(s.m - (p.mb - 1) * bm);
    c_in_place.last_cols = int(s.n - (p.nb - 1) * bn);
    p.c_in_place_map.at = c_in_place;
    dispatch_kernels(p, p.c_in_place_map, libxsmm_blasint(bm), libxsmm_blasint(p.packed_b_ld),
                     libxsmm_blasint(s.m));
    // B in place reads whole K blocks, and a K the blocks do not divide a
    // shorter last one on kernels of its own (Impl::k_tail): not for bf16
    // with an odd one (LIBXSMM's kernels contract VNNI pairs) nor on AMX tiles.
    if (d.b_in_place_kernels != KernelFamily::none) {
      p.b_in_place_map.at = c_in_place;
      p.b_in_place_map.at.b_col_block = bn * s.k;
      p.b_in_place_map.at.b_k_block = bk;
      dispatch_kernels(p, p.b_in_place_map, libxsmm_blasint(bm), libxsmm_blasint(s.k), libxsmm_blasint(s.m),
                       /*narrow=*/false, /*k_tail=*/true);
      // One column of tiles: A in place too (see Impl::all_in_place_map).
      if (d.all_in_place_kernels != KernelFamily::none) {
        p.all_in_place_map.at = p.b_in_place_map.at;
        p.all_in_place_map.at.a_row_block = bm;
        p.all_in_place_map.at.a_k_block = bk * s.m;
        const bool bf16 = p.dtype == DType::bf16;
        const bool by_block = d.all_in_place_kernels == KernelFamily::by_block;
        dispatch_kernels(p, p.all_in_place_map, libxsmm_blasint(s.m), libxsmm_blasint(s.k),
                         libxsmm_blasint(s.m), /*narrow=*/bf16, /*k_tail=*/true, by_block);
      }
    }
  }
  if (d.transpose_kernels) {  // (see Impl::transpose_a)
    libxsmm_descriptor_blob blob;
    const auto size = unsigned(input_size(p.dtype));
    p.transpose_a = libxsmm_dispatch_trans(
        libxsmm_trans_descriptor_init(&blob, size, unsigned(bk), unsigned(bm), unsigned(bm)));
    p.transpose_b = libxsmm_dispatch_trans(
        libxsmm_trans_descriptor_init(&blob, size, unsigned(bn), unsigned(bk), unsigned(p.packed_b_ld)));
  }
  if (!ok)
    throw Error(std::string(to_string(p.dtype)) + " GEMM is not supported on this CPU: LIBXSMM " +
                LIBXSMM_VERSION + " generates no " + std::string(to_string(p.dtype)) +
                " batch-reduce kernel for ISA '" + libxsmm_get_target_arch() + "'" +
                (p.dtype == DType::bf16 ? " (bf16 needs AVX-512)" : ""));
}

}  // namespace sfc
