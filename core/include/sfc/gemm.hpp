// The SFC-CA GEMM engine: C = A * B, planned once, executed many times.
//
//   sfc::GemmPlan plan({.shape = {m, n, k}, .threads = 2, .k_layers = 2, .k_block_factor = 4});
//   plan.gemm(sfc::Layout::row_major, a, lda, b, ldb, c, ldc);      // plain matrices
//   plan.execute(a_blocked, b_blocked, c_blocked);                  // native blocked layout
//
// Planning (block sizes, the Gilbert curve map, the K split of every layer and
// round, LIBXSMM kernel dispatch, the K_layers-1 scratch copies of C and the
// packing buffers) happens in the constructor; execute() allocates nothing and
// dispatches nothing. A plan may be executed by one caller at a time (it owns
// its scratch); build one plan per concurrent caller.
//
// Native blocked layout (column-major, zero padded to full blocks):
//   A: [Mb][Kb][bk][bm]  -- block (im, kb) holds A(im*bm + i, kb*bk + kk) at kk*bm + i
//                           (bf16: VNNI pairs, at (kk/2)*2*bm + 2*i + kk%2)
//   B: [Nb][bn][Kb*bk]   -- column panel in holds B(k, in*bn + j) at j*Kb*bk + k
//   C: [Nb][Mb][bn][bm]  -- block (in, im) holds C(im*bm + i, in*bn + j) at j*bm + i
// so the K blocks of one A row panel (and of one B column panel) are contiguous,
// which is what the stride-based batch-reduce GEMM walks, and each column of B
// runs unbroken through K, which is what the kernel streams. (A plan for plain
// operands whose loop M is one block -- M of a column-major plan, N of a
// row-major one, see below -- packs B a few K blocks at a time inside the loop,
// so its B is [Nb][Kb][bn][bk]: block (in, kb) holds B(kb*bk + kk, in*bn + j)
// at j*bk + kk. pack_b and execute always agree.)
// A plan built for row-major operands (PlanRequest::layout = row_major) runs the
// column-major problem C^T = B^T A^T, as BLAS libraries do, so that packing is
// plain copies; its blocked A is then laid out as the B operand above (and B
// as A, C as C^T). pack_a/pack_b/unpack_c/execute always take the caller's A,
// B and C, so code that goes through them never needs to know.
//
// Element types: f32 and f64 use float/double for A, B and C; bf16 takes A and
// B as raw bfloat16 bits (std::uint16_t) and accumulates into a float C.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sfc/error.hpp"
#include "sfc/threads.hpp"

namespace sfc {

struct PlanDecision;  // sfc/plan_decision.hpp

enum class DType { f32, f64, bf16 };
enum class Layout { blocked, row_major, col_major };
// op(X) in a BLAS call: X itself, or its transpose.
enum class Transpose { none, transpose };

std::string_view to_string(DType dtype);
std::string_view to_string(Layout layout);
DType parse_dtype(std::string_view text);    // "f32" | "f64" | "bf16"; throws sfc::Error
Layout parse_layout(std::string_view text);  // "blocked" | "row" | "col"; throws sfc::Error
std::size_t input_size(DType dtype);         // bytes of one A or B element
std::size_t output_size(DType dtype);        // bytes of one C element

// The largest M, N or K the engine runs, every predictor answers and every
// stored record may hold: LIBXSMM's blasint is 32-bit. One bound for all, so
// nothing is accepted by one layer that the next refuses.
inline constexpr std::int64_t kMaxGemmSize = (std::int64_t{1} << 31) - 1;

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};
std::string to_string(const GemmShape& shape);  // "MxNxK", as every report names a shape

// Which of the caller's matrices GemmPlan::gemm() copies (A, B into the
// blocked layout; C out of it); the others it reads or writes in place.
struct GemmCopies {
  bool a = true, b = true, c = true;
  bool operator==(const GemmCopies&) const = default;
};

struct BlockSizes {
  int bm = 0, bn = 0, bk = 0;  // 0: chosen by choose_blocks()
};

// The block-size rule (one place, documented in core/src/blocking.cpp), for a
// column-major problem run by `threads` threads on operands in `layout` (a
// row-major plan asks it for its transposed problem).
BlockSizes choose_blocks(const GemmShape& shape, DType dtype, int threads, Layout layout = Layout::blocked);

// The column-major problem a plan for `layout` runs: a row-major call's
// C = A B as C^T = B^T A^T (M and N swapped), the others as they are.
GemmShape loop_shape(const GemmShape& shape, Layout layout);

// Whether gemm() on plain operands writes C in place over several rounds: the
// blocks divide the loop's M and N, or its N fits one block (one column of
// tiles). Elsewhere C is written in place with one round only, and copied (A
// and B packed with it) for more.
bool c_in_place_over_rounds(const GemmShape& loop, const BlockSizes& blocks);

struct PlanRequest {
  GemmShape shape;
  DType dtype = DType::f32;
  // At most this many threads run a call (0: default_threads()); a small
  // one runs on fewer, one per 0.5-1 MFLOP and no more than the loop has tasks,
  // and a call of one thread on the calling thread, opening no OpenMP team.
  int threads = 0;
  int k_layers = 1;        // copies of C, 1..8 (clamped to the K blocks available)
  int k_block_factor = 1;  // K rounds per layer, 1..8 (clamped likewise)
  BlockSizes blocks = {};  // 0 fields: the block-size rule picks them
  // row/col: gemm() on plain matrices. The packing buffers a call in this
  // layout with tight leading dimensions needs are allocated with the plan
  // (often one operand's: see copies(); with a single column or row of
  // tiles, a 256 KiB panel of it per thread, packed inside the loop); a call
  // that needs more allocates it once, on first use.
  Layout layout = Layout::blocked;
};

class GemmPlan {
 public:
  // Validates the request (throws sfc::Error with a one-line reason), then plans.
  explicit GemmPlan(const PlanRequest& request);
  ~GemmPlan();
  GemmPlan(GemmPlan&&) noexcept;
  GemmPlan& operator=(GemmPlan&&) noexcept;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  const GemmShape& shape() const;
  DType dtype() const;
  int threads() const;
  int k_layers() const;        // effective (after clamping)
  int k_block_factor() const;  // effective (after clamping)
  BlockSizes blocks() const;
  // The batch-reduce kernel the loop calls: "libxsmm", or "amx" for bf16 on
  // a CPU with AMX tiles (LIBXSMM 1.17 generates none; core has its own, which
  // SFC_AMX=0 turns off).
  std::string_view kernel() const;
  // True when the plan stores C with non-temporal stores, past the caches:
  // C of at least 4 MiB written once (one layer, one round), in the blocked
  // layout only over a K of at most 64, on a C whose columns start on whole
  // cache lines (a caller's C that does not is written as usual).
  bool streams_c() const;
  std::int64_t mb() const;  // ceil(M / bm)
  std::int64_t nb() const;
  std::int64_t kb() const;

  // Elements in the blocked (padded) buffers.
  std::size_t a_elements() const;
  std::size_t b_elements() const;
  std::size_t c_elements() const;
  // Bytes the plan itself holds (scratch copies of C and packing buffers).
  std::size_t workspace_bytes() const;
  // Every choice the plan was built from (sfc/plan_decision.hpp: decide()),
  // printable with describe(); its workspace_bytes is what the plan held
  // when built (a call with other leading dimensions may add buffers).
  const PlanDecision& decision() const;

  // C = A * B on blocked operands (see the layout above). C is overwritten.
  // Not const: a call writes the plan's scratch (the copies of C, packing
  // buffers), so one plan serves one caller at a time (debug builds assert it).
  void execute(const void* a, const void* b, void* c);

  // Plain matrices <-> blocked layout; parallel over blocks with the plan's threads.
  // row_major: element (r, c) at r*ld + c; col_major: at c*ld + r.
  void pack_a(Layout layout, const void* a, std::int64_t lda, void* a_blocked) const;
  void pack_b(Layout layout, const void* b, std::int64_t ldb, void* b_blocked) const;
  void unpack_c(const void* c_blocked, Layout layout, void* c, std::int64_t ldc) const;

  // C = A * B on plain matrices, C overwritten (the BLAS entry below with no
  // transposes, alpha 1 and beta 0). Copies into the blocked layout only what
  // copies() says; the rest is read or written where it is.
  void gemm(Layout layout, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c,
            std::int64_t ldc);
  // BLAS's xGEMM: C = alpha * op(A) * op(B) + beta * C on plain matrices in
  // `layout` (row or col major; the plan's M x N x K are op(A)'s M x K and
  // op(B)'s K x N). beta = 0 never reads C (NaN or Inf there do not leak);
  // alpha = 0 never reads A or B. A transposed operand is read through the
  // other layout when it is packed, never copied first. Where C is written in
  // place (copies() says when), alpha scales the packed operand and beta
  // scales C in the loop's prologue (beta = 1: C is not touched before the
  // loop adds to it); otherwise both are applied where C is written from the
  // blocked result. bf16: alpha and beta apply to the fp32 C. Throws
  // sfc::Error for a leading dimension below its minimum, or for
  // Layout::blocked with anything but (none, none, 1, 0).
  void gemm(Layout layout, Transpose trans_a, Transpose trans_b, double alpha, const void* a,
            std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c, std::int64_t ldc);

  // What gemm() with these arguments copies. Everything, unless the call is in
  // the plan's own (plain) layout with a tight ldc and either blocks that
  // divide M and N or a single round (k_block_factor 1: the edge tiles of a
  // ragged M or N run kernels of their own size): then C is written in place
  // and A and B are packed (transposed or not);
  // if moreover the blocks divide K and the operand the loop streams is tight,
  // only the other one is packed (row-major: B, with op(A) = A and lda = K, or
  // op(A) = A^T and lda = M; column-major: A, with op(B) = B and ldb = K, or
  // op(B) = B^T and ldb = N; transposed: fp32 and fp64, where LIBXSMM has
  // kernels that read B transposed). Tight means row-major lda = K, ldb = ldc =
  // N; column-major lda = ldc = M, ldb = K. bf16 with alpha != 1 copies C
  // (alpha*A would round to bf16).
  // With Layout::blocked, nothing (gemm() is execute()).
  GemmCopies copies(Layout layout, Transpose trans_a, Transpose trans_b, std::int64_t lda, std::int64_t ldb,
                    std::int64_t ldc, double alpha = 1) const;
  // The same for C = A * B (no transposes, alpha 1).
  GemmCopies copies(Layout layout, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sfc
