// Plain row/column-major matrices <-> the blocked layout (see sfc/gemm.hpp).
//
// Each routine is a worksharing loop over destination blocks for the thread
// team that calls it (orphaned `omp for`): the public pack_a/pack_b open a
// team for it, gemm() runs it in the SFC-CA loop's own team (pack_operand),
// saving a fork and join per call. Interior blocks take a branch-free path;
// only the blocks on the ragged edge test bounds and write the zero padding.
// Reads run along the source's contiguous dimension.
#include <libxsmm.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "plan_impl.hpp"
#include "simd.hpp"
#include "team.hpp"

namespace sfc {
namespace {

void check_ld(Layout layout, std::int64_t ld, std::int64_t rows, std::int64_t cols, const char* name) {
  if (layout == Layout::blocked)
    throw Error(std::string("pack/unpack of ") + name + " needs a plain layout (row or col)");
  const std::int64_t min = layout == Layout::row_major ? cols : rows;
  if (ld < std::max<std::int64_t>(min, 1))
    throw Error(std::string("leading dimension of ") + name + " is " + std::to_string(ld) +
                ", must be >= " + std::to_string(min) + " for a " + std::to_string(rows) + " x " +
                std::to_string(cols) + " " + std::string(to_string(layout)) + "-major matrix");
}

// Element (r, c) of a plain matrix.
template <class T>
struct Plain {
  const T* data;
  std::int64_t ld;
  bool row_major;
  T operator()(std::int64_t r, std::int64_t c) const {
    return row_major ? data[r * ld + c] : data[c * ld + r];
  }
};

// blk[j * ldo + i] = from[i * ld + j] for a `rows` x `cols` piece read row by
// row: LIBXSMM's kernel (the plan's, for whole blocks) where it applies,
// element by element otherwise (ragged edges, bf16, an ld beyond unsigned).
template <class T>
void transpose_into(libxsmm_xtransfunction kernel, bool whole, const T* from, std::int64_t ld, int rows,
                    int cols, T* blk, int ldo) {
  if (kernel && whole && ld <= std::int64_t(std::numeric_limits<unsigned>::max())) {
    const auto ldi = unsigned(ld), ldo_unsigned = unsigned(ldo);
    kernel(from, &ldi, blk, &ldo_unsigned);
    return;
  }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) blk[j * ldo + i] = from[i * ld + j];
}

// Copies `count` elements, times `scale` unless it is 1.
template <class T>
void copy_scaled(const T* src, std::int64_t count, T* dst, T scale) {
  if (scale == T(1))
    std::copy_n(src, count, dst);
  else
    for (std::int64_t i = 0; i < count; ++i) dst[i] = scale * src[i];
}

// VNNI pairs of two columns of K: out[2 i] = x0[i], out[2 i + 1] = x1[i] for
// i < rows. The portable build's compiler interleaves 8 elements per step at
// best (SSE2); with AVX512-BW two permutes interleave 32 at a time
// (docs/experiments/2026-12-07-figures-from-code-comments.md#vnni-packing-32-at-a-time).
using Pairs = void (*)(const std::uint16_t* x0, const std::uint16_t* x1, int rows, std::uint16_t* out);

[[gnu::always_inline]] inline void pairs_tail(const std::uint16_t* x0, const std::uint16_t* x1, int from,
                                              int rows, std::uint16_t* out) {
  for (int i = from; i < rows; ++i) {
    out[2 * i] = x0[i];
    out[2 * i + 1] = x1[i];
  }
}

void pairs_plain(const std::uint16_t* x0, const std::uint16_t* x1, int rows, std::uint16_t* out) {
  pairs_tail(x0, x1, 0, rows, out);
}

template <std::size_t... I>
[[gnu::target("avx512f,avx512bw"), gnu::always_inline]] inline void pairs_of_32(const std::uint16_t* x0,
                                                                                const std::uint16_t* x1,
                                                                                std::uint16_t* out,
                                                                                std::index_sequence<I...>) {
  using V [[gnu::vector_size(64)]] = std::uint16_t;  // 32 lanes
  V a, b;
  std::memcpy(&a, x0, sizeof a);
  std::memcpy(&b, x1, sizeof b);
  const V lo = __builtin_shufflevector(a, b, (I % 2 ? 32 + I / 2 : I / 2)...);
  const V hi = __builtin_shufflevector(a, b, (I % 2 ? 48 + I / 2 : 16 + I / 2)...);
  std::memcpy(out, &lo, sizeof lo);
  std::memcpy(out + 32, &hi, sizeof hi);
}

[[gnu::target("avx512f,avx512bw")]] void pairs_avx512(const std::uint16_t* x0, const std::uint16_t* x1,
                                                      int rows, std::uint16_t* out) {
  int i = 0;
  for (; i + 32 <= rows; i += 32) pairs_of_32(x0 + i, x1 + i, out + 2 * i, std::make_index_sequence<32>{});
  pairs_tail(x0, x1, i, rows, out);
}

Pairs pairs_here() { return simd::has_avx512() ? pairs_avx512 : pairs_plain; }

// A block (im, kb): element (i, kk) at kk*bm + i, times `scale` (the caller
// folds alpha into A); bf16 in VNNI pairs, unscaled.
template <class T>
void pack_a_block(const GemmPlan::Impl& p, Plain<T> src, std::int64_t im, std::int64_t kb, T* blk, T scale) {
  const int bm = p.blocks.bm, bk = p.blocks.bk;
  const std::int64_t r0 = im * bm, c0 = kb * bk;
  const int rows = int(std::min<std::int64_t>(bm, p.shape.m - r0));
  const int cols = int(std::min<std::int64_t>(bk, p.shape.k - c0));
  if (rows < bm || cols < bk) std::fill(blk, blk + bm * bk, T(0));
  if constexpr (!std::is_floating_point_v<T>) {  // bf16, in VNNI pairs; never scaled
    // Pair kk / 2 of the block interleaves K = kk and kk + 1: at kk * bm + 2 i + p.
    // Read along the source's contiguous dimension, with no test per element:
    // on AMX tiles the kernel is fast enough for this copy to show (row-major
    // M = 256 ran at half the blocked rate when it went element by element).
    if (!src.row_major) {  // two columns of the block at a time, both contiguous
      for (int kk = 0; kk < cols; kk += 2) {
        const T* x0 = src.data + (c0 + kk) * src.ld + r0;
        T* out = blk + std::int64_t(kk) * bm;
        if (kk + 1 < cols) {
          static const Pairs pairs = pairs_here();
          pairs(x0, x0 + src.ld, rows, out);
        } else {  // an odd last K: its partner stays zero (the fill above)
          for (int i = 0; i < rows; ++i) out[2 * i] = x0[i];
        }
      }
    } else {  // a row of the block at a time, contiguous along K
      for (int i = 0; i < rows; ++i) {
        const T* x = src.data + (r0 + i) * src.ld + c0;
        for (int kk = 0; kk < cols; ++kk) blk[(kk / 2) * 2 * bm + 2 * i + kk % 2] = x[kk];
      }
    }
  } else if (src.row_major) {
    // A transpose: read rows along K, write the block's columns.
    transpose_into(p.transpose_a, rows == bm && cols == bk, src.data + r0 * src.ld + c0, src.ld, rows, cols,
                   blk, bm);
    if (scale != T(1))
      for (int e = 0; e < bm * bk; ++e) blk[e] *= scale;
  } else {
    for (int kk = 0; kk < cols; ++kk)
      copy_scaled(src.data + (c0 + kk) * src.ld + r0, rows, blk + kk * bm, scale);
  }
}

template <class T>
void pack_a_blocks(const GemmPlan::Impl& p, Plain<T> src, T* dst, T scale) {
  const std::int64_t block = std::int64_t(p.blocks.bm) * p.blocks.bk;
#pragma omp for collapse(2) schedule(static)
  for (std::int64_t im = 0; im < p.mb; ++im)
    for (std::int64_t kb = 0; kb < p.kb; ++kb)
      pack_a_block(p, src, im, kb, dst + (im * p.kb + kb) * block, scale);
}

// B block (in, kb): element (kk, j) at j*ld + kk, where ld is the packed
// B's column distance (Impl::packed_b_ld: the panel's padded K, or bk).
template <class T>
void pack_b_block(const GemmPlan::Impl& p, Plain<T> src, std::int64_t in, std::int64_t kb, T* blk) {
  const int bn = p.blocks.bn, bk = p.blocks.bk;
  const int ld = int(p.packed_b_ld);
  const std::int64_t r0 = kb * bk, c0 = in * bn;
  const int rows = int(std::min<std::int64_t>(bk, p.shape.k - r0));
  const int cols = int(std::min<std::int64_t>(bn, p.shape.n - c0));
  if (rows < bk || cols < bn)
    for (int j = 0; j < bn; ++j) std::fill_n(blk + std::int64_t(j) * ld, bk, T(0));
  if (src.row_major) {  // a transpose
    transpose_into(p.transpose_b, rows == bk && cols == bn, src.data + r0 * src.ld + c0, src.ld, rows, cols,
                   blk, ld);
  } else {
    for (int j = 0; j < cols; ++j)
      std::copy_n(src.data + (c0 + j) * src.ld + r0, rows, blk + std::int64_t(j) * ld);
  }
}

// A row-major source is walked block row by block row (kb outer), so that
// reads run along its rows.
template <class T>
void pack_b_blocks(const GemmPlan::Impl& p, Plain<T> src, T* dst) {
  const Addressing& at = p.blocked_map.at;
  const std::int64_t blocks = p.nb * p.kb;
#pragma omp for schedule(static)
  for (std::int64_t t = 0; t < blocks; ++t) {
    const std::int64_t in = src.row_major ? t % p.nb : t / p.kb;
    const std::int64_t kb = src.row_major ? t / p.nb : t % p.kb;
    pack_b_block(p, src, in, kb, dst + in * at.b_col_block + kb * at.b_k_block);
  }
}

// How the blocked result meets C: overwrite it (alpha 1, beta 0, a plain
// copy), scale it in (beta 0: C is never read) or add it to a scaled C.
template <class T>
struct Epilogue {
  T alpha, beta;
  bool copy() const { return alpha == T(1) && beta == T(0); }
  T operator()(T result, const T& c) const {
    return beta == T(0) ? alpha * result : alpha * result + beta * c;
  }
};

// C block (in, im): element (i, j) at j*bm + i; padding is dropped.
template <class T>
void unpack_c_blocks(const GemmPlan::Impl& p, const T* src, T* dst, std::int64_t ld, bool row_major,
                     Epilogue<T> e) {
  const int bm = p.blocks.bm, bn = p.blocks.bn;
  // No more threads than blocks of C (see Impl::team).
  run_on_team(int(std::min<std::int64_t>(p.packing_team, p.mb * p.nb)), [&] {
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t in = 0; in < p.nb; ++in)
      for (std::int64_t im = 0; im < p.mb; ++im) {
        const T* blk = src + (in * p.mb + im) * bm * bn;
        const std::int64_t r0 = im * bm, c0 = in * bn;
        const int rows = int(std::min<std::int64_t>(bm, p.shape.m - r0));
        const int cols = int(std::min<std::int64_t>(bn, p.shape.n - c0));
        if (row_major) {
          for (int i = 0; i < rows; ++i) {
            T* out = dst + (r0 + i) * ld + c0;
            if (e.copy())
              for (int j = 0; j < cols; ++j) out[j] = blk[j * bm + i];
            else
              for (int j = 0; j < cols; ++j) out[j] = e(blk[j * bm + i], out[j]);
          }
        } else {
          for (int j = 0; j < cols; ++j) {
            T* out = dst + (c0 + j) * ld + r0;
            if (e.copy())
              std::copy_n(blk + j * bm, rows, out);
            else
              for (int i = 0; i < rows; ++i) out[i] = e(blk[j * bm + i], out[i]);
          }
        }
      }
  });
}

template <class F>
void with_input_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: f(float{}); break;
    case DType::f64: f(double{}); break;
    case DType::bf16: f(libxsmm_bfloat16{}); break;
  }
}

}  // namespace

// The public helpers speak of the caller's A, B and C. For a transposed plan
// (see plan_impl.hpp) A^T is the loop's right operand, B^T its left one and C^T
// its output; reading a matrix through the opposite layout flag is exactly its
// transpose, so the roles swap and the views flip.
void check_operand_ld(const GemmPlan::Impl& p, Operand operand, Layout layout, std::int64_t ld) {
  if (operand == Operand::a)
    check_ld(layout, ld, p.user_shape.m, p.user_shape.k, "A");
  else
    check_ld(layout, ld, p.user_shape.k, p.user_shape.n, "B");
}

void pack_operand(const GemmPlan::Impl& p, Operand operand, Layout layout, const void* src, std::int64_t ld,
                  void* dst, double scale) {
  const bool row = (layout == Layout::row_major) != p.transposed;
  const bool loop_a = is_loop_a(p, operand);
  assert(scale == 1 || (loop_a && p.dtype != DType::bf16));
  with_input_type(p.dtype, [&](auto t) {
    using T = decltype(t);
    const Plain<T> view{static_cast<const T*>(src), ld, row};
    if (!loop_a)
      pack_b_blocks<T>(p, view, static_cast<T*>(dst));
    else if constexpr (std::is_floating_point_v<T>)
      pack_a_blocks<T>(p, view, static_cast<T*>(dst), T(scale));
    else
      pack_a_blocks<T>(p, view, static_cast<T*>(dst), T{});  // bf16: unscaled (the VNNI path)
  });
}

void pack_panel(const GemmPlan::Impl& p, Operand operand, Layout layout, const void* src, std::int64_t ld,
                std::int64_t index, const KSlice& slice, void* dst, double scale) {
  const bool row = (layout == Layout::row_major) != p.transposed;
  const bool loop_a = is_loop_a(p, operand);
  assert(scale == 1 || (loop_a && p.dtype != DType::bf16));
  with_input_type(p.dtype, [&](auto t) {
    using T = decltype(t);
    const Plain<T> view{static_cast<const T*>(src), ld, row};
    T* out = static_cast<T*>(dst);
    T factor{};  // bf16 is never scaled (the VNNI path ignores it)
    if constexpr (std::is_floating_point_v<T>) factor = T(scale);
    // B's panels are bk x bn blocks one after the other (Impl::packed_b_ld).
    assert(loop_a || p.packed_b_ld == p.blocks.bk);
    const std::int64_t block = std::int64_t(p.blocks.bk) * (loop_a ? p.blocks.bm : p.blocks.bn);
    for (std::int64_t j = 0; j < std::int64_t(slice.count); ++j) {
      if (loop_a)
        pack_a_block(p, view, index, slice.begin + j, out + j * block, factor);
      else
        pack_b_block(p, view, index, slice.begin + j, out + j * block);
    }
  });
}

void GemmPlan::pack_a(Layout layout, const void* a, std::int64_t lda, void* a_blocked) const {
  const Impl& p = *impl_;
  check_operand_ld(p, Operand::a, layout, lda);
  run_on_team(p.packing_team, [&] { pack_operand(p, Operand::a, layout, a, lda, a_blocked); });
}

void GemmPlan::pack_b(Layout layout, const void* b, std::int64_t ldb, void* b_blocked) const {
  const Impl& p = *impl_;
  check_operand_ld(p, Operand::b, layout, ldb);
  run_on_team(p.packing_team, [&] { pack_operand(p, Operand::b, layout, b, ldb, b_blocked); });
}

void check_result_ld(const GemmPlan::Impl& p, Layout layout, std::int64_t ld) {
  check_ld(layout, ld, p.user_shape.m, p.user_shape.n, "C");
}

void unpack_result(const GemmPlan::Impl& p, const void* c_blocked, Layout layout, void* c, std::int64_t ldc,
                   double alpha, double beta) {
  const bool row = (layout == Layout::row_major) != p.transposed;
  if (p.dtype == DType::f64)
    unpack_c_blocks(p, static_cast<const double*>(c_blocked), static_cast<double*>(c), ldc, row,
                    Epilogue<double>{alpha, beta});
  else
    unpack_c_blocks(p, static_cast<const float*>(c_blocked), static_cast<float*>(c), ldc, row,
                    Epilogue<float>{float(alpha), float(beta)});
}

void scale_result_lines(const GemmPlan::Impl& p, Layout layout, void* c, std::int64_t ldc, double beta) {
  const GemmShape& u = p.user_shape;
  // Lines along C's contiguous dimension: rows of a row-major C, columns of a column-major one.
  const std::int64_t lines = layout == Layout::row_major ? u.m : u.n;
  const std::int64_t length = layout == Layout::row_major ? u.n : u.m;
  auto scale = [&](auto* data, auto factor) {
#pragma omp for schedule(static)
    for (std::int64_t l = 0; l < lines; ++l) {
      auto* line = data + l * ldc;
      if (factor == 0)
        std::fill(line, line + length, decltype(factor)(0));  // not 0 * C: NaN and Inf must not survive
      else
        for (std::int64_t i = 0; i < length; ++i) line[i] *= factor;
    }
  };
  if (p.dtype == DType::f64)
    scale(static_cast<double*>(c), beta);
  else
    scale(static_cast<float*>(c), float(beta));
}

void scale_result(const GemmPlan::Impl& p, Layout layout, void* c, std::int64_t ldc, double beta) {
  run_on_team(p.packing_team, [&] { scale_result_lines(p, layout, c, ldc, beta); });
}

void GemmPlan::unpack_c(const void* c_blocked, Layout layout, void* c, std::int64_t ldc) const {
  check_result_ld(*impl_, layout, ldc);
  unpack_result(*impl_, c_blocked, layout, c, ldc, 1.0, 0.0);
}

}  // namespace sfc
