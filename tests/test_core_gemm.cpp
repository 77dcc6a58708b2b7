// The engine against an fp64 reference, over the whole knob space.
//
// Error bound: check_against_reference returns gamma_K * || |A||B| ||_F / ||C_ref||_F,
// the worst case for summing K products in any order with unit roundoff u
// (2^-24 for f32/bf16 accumulation, 2^-53 for f64). Every K_layers and
// k_block_factor only reorders that sum, so one bound covers them all; a
// wrong tile, a missed layer or a double-counted round breaks it by orders of
// magnitude (errors of order 1 against bounds of 1e-4 for f32, 1e-12 for f64).
#include <doctest/doctest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "sfc/aligned_buffer.hpp"
#include "sfc/gemm.hpp"
#include "sfc/kernel_rate.hpp"
#include "sfc/verify.hpp"
#include "support.hpp"

using namespace sfc;

namespace {

struct Case {
  GemmShape shape;
  BlockSizes blocks;
};

// Small explicit blocks give K enough blocks (65) that no (K_layers,
// k_block_factor) up to 8 x 8 is clamped; the others use the block-size rule.
const Case cases[] = {
    {{67, 45, 517}, {16, 16, 8}},   // ragged in every dimension, 65 K blocks
    {{1, 37, 300}, {}},             // M = 1
    {{129, 1, 64}, {}},             // N = 1, a single K block
    {{64, 96, 128}, {32, 32, 16}},  // exact multiples of the blocks
    {{2100, 300, 16}, {}},          // one K block: tall tiles (700 rows; 300 row-major), ragged N
    {{1500, 1000, 3}, {}},          // the same, with 750-row tiles and ragged 63-column ones
};

void check_case(const Case& c, DType dtype, int threads, Layout layout, int kl, int kbf) {
  PlanRequest r;
  r.shape = c.shape;
  r.blocks = c.blocks;
  r.dtype = dtype;
  r.threads = threads;
  r.k_layers = kl;
  r.k_block_factor = kbf;
  r.layout = layout;
  GemmPlan plan(r);
  REQUIRE(plan.k_layers() <= kl);
  REQUIRE(plan.k_block_factor() <= kbf);
  REQUIRE(plan.k_layers() * plan.k_block_factor() <= plan.kb());
  const CheckResult res = check_against_reference(plan, layout, 11);
  INFO(c.shape.m << "x" << c.shape.n << "x" << c.shape.k << " " << to_string(dtype) << " threads=" << threads
                 << " layout=" << to_string(layout) << " KL=" << kl << " KBF=" << kbf);
  REQUIRE(res.rel_error <= res.bound);
}

// f32, f64, and bf16 where this CPU has kernels for it.
std::vector<DType> dtypes_here() {
  std::vector<DType> dtypes{DType::f32, DType::f64};
  try {
    GemmPlan probe({.shape = {16, 16, 16}, .dtype = DType::bf16});
    dtypes.push_back(DType::bf16);
  } catch (const Error&) {  // no bf16 kernels on this CPU
  }
  return dtypes;
}

}  // namespace

TEST_CASE("f32 and f64 match the reference for every (K_layers, k_block_factor) in 1..8 x 1..8") {
  for (DType dtype : {DType::f32, DType::f64})
    for (const Case& c : cases)
      for (int kl = 1; kl <= 8; ++kl)
        for (int kbf = 1; kbf <= 8; ++kbf) check_case(c, dtype, 2, Layout::blocked, kl, kbf);
}

TEST_CASE("thread counts 1, 2, 3 and all three layouts") {
  for (DType dtype : {DType::f32, DType::f64})
    for (const Case& c : cases)
      for (int threads : {1, 2, 3})
        for (Layout layout : {Layout::blocked, Layout::row_major, Layout::col_major})
          for (auto [kl, kbf] : {std::pair{1, 1}, {2, 3}, {3, 2}, {8, 8}})
            check_case(c, dtype, threads, layout, kl, kbf);
}

TEST_CASE("gemm() writes C of tight plain matrices in place, ragged or not, for every knob") {
  const Case exact{{64, 96, 128}, {32, 32, 16}};
  // Ragged M and N with K divided (B in place, edge tiles of 3 x 13), and
  // ragged in every dimension (B packed).
  const Case ragged_mn{{67, 45, 512}, {16, 16, 8}}, ragged{{67, 45, 517}, {16, 16, 8}};
  // One column of tiles in the loop's terms (column-major N, row-major M, below
  // one block): A is packed panel by panel inside the loop, ragged in M and K.
  const Case one_column{{300, 12, 517}, {32, 16, 8}}, one_row{{12, 300, 517}, {16, 32, 8}};
  for (DType dtype : {DType::f32, DType::f64})
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (int kl = 1; kl <= 8; ++kl)
        for (int kbf = 1; kbf <= 8; ++kbf)
          for (const Case& c : {exact, ragged_mn, ragged, one_column, one_row})
            check_case(c, dtype, 2, layout, kl, kbf);

  const GemmCopies all{true, true, true}, a_and_b{true, true, false};
  PlanRequest r;
  r.shape = exact.shape;
  r.blocks = exact.blocks;
  r.layout = Layout::row_major;
  GemmPlan row(r);
  CHECK(row.copies(Layout::row_major, 128, 96, 96) == GemmCopies{false, true, false});  // B packed
  CHECK(row.copies(Layout::row_major, 130, 96, 96) == a_and_b);  // padded A: packed too
  CHECK(row.copies(Layout::row_major, 128, 100, 96) == GemmCopies{false, true, false});  // B is packed anyway
  CHECK(row.copies(Layout::row_major, 128, 96, 100) == all);                             // padded C: unpacked
  CHECK(row.copies(Layout::col_major, 64, 128, 64) == all);  // not the plan's layout
  CHECK(row.copies(Layout::blocked, 0, 0, 0) == GemmCopies{false, false, false});
  r.layout = Layout::col_major;
  CHECK(GemmPlan(r).copies(Layout::col_major, 64, 128, 64) == GemmCopies{true, false, false});  // A packed
  r.shape = {64, 96, 130};  // K not divided: B still in place, its last K block shorter; C in place
  CHECK(GemmPlan(r).copies(Layout::col_major, 64, 130, 64) == GemmCopies{true, false, false});
  CHECK(GemmPlan(r).copies(Layout::col_major, 64, 131, 64) == a_and_b);  // padded B: packed
  r.shape = {67, 45, 517};  // ragged: the edge tiles run kernels of their own size, B and C in place
  CHECK(GemmPlan(r).copies(Layout::col_major, 67, 517, 67) == GemmCopies{true, false, false});
  CHECK(GemmPlan(r).copies(Layout::col_major, 67, 517, 70) == all);  // padded C: unpacked
  r.shape = {67, 45, 512};  // ragged M and N, K divided: only A packed
  CHECK(GemmPlan(r).copies(Layout::col_major, 67, 512, 67) == GemmCopies{true, false, false});
  r.k_block_factor = 2;  // several rounds re-read C's misaligned columns: C is copied on a ragged shape
  CHECK(GemmPlan(r).copies(Layout::col_major, 67, 512, 67) == all);
  r.shape = exact.shape;  // and written in place on a divided one
  CHECK(GemmPlan(r).copies(Layout::col_major, 64, 128, 64) == GemmCopies{true, false, false});
  r.shape = one_column.shape;  // and on one column of tiles, ragged or not: nothing copied
  r.blocks = one_column.blocks;
  CHECK(GemmPlan(r).copies(Layout::col_major, 300, 517, 300) == GemmCopies{false, false, false});
  r.blocks = exact.blocks;
  r.k_block_factor = 1;
  r.shape = exact.shape;
  r.dtype = DType::bf16;  // A in VNNI pairs, packed; B and C in place as for fp32
  std::optional<GemmPlan> bf16;
  try {
    bf16.emplace(r);
  } catch (const Error&) {  // no bf16 kernels on this CPU
  }
  if (bf16) CHECK(bf16->copies(Layout::col_major, 64, 128, 64) == GemmCopies{true, false, false});
}

TEST_CASE("core's own kernels: one-row tiles, and one column of tiles read in place, for every entry") {
  // The loop's M is 1 (M = 1 column-major or blocked, N = 1 row-major): the
  // single-row kernel; 2: its two-row form (fp32 and fp64). One column of tiles with K divided and tight
  // operands: nothing copied, bf16 up to 8 columns on the narrow kernel (12 on AVX512-BF16; wider: packed
  // again); ragged M; a K of one block; K blocks that end in part of a vector (bk 50, and a ragged K: bf16's
  // single-row kernel reads those under a mask), and bf16's narrow kernel's pairs of K: rows past the last 32
  // (masked), K blocks of 50 and 46 (passes of 2 and 1 pairs). Several layers
  // and rounds, 3 threads.
  const GemmShape shapes[] = {{1, 300, 256}, {300, 1, 256}, {600, 5, 384}, {5, 600, 384}, {601, 8, 384},
                              {8, 601, 384}, {600, 9, 384}, {9, 600, 384}, {1, 1, 64},    {333, 3, 64},
                              {1, 70, 100},  {70, 1, 1001}, {4, 70, 100},  {6, 45, 90},   {12, 130, 96},
                              {13, 70, 64},  {2, 300, 256}, {300, 2, 256}, {2, 70, 1001}, {70, 2, 100},
                              {2, 1, 64},    {2, 5, 50}};
  const std::vector<DType> dtypes = dtypes_here();
  for (DType dtype : dtypes)
    for (const GemmShape& shape : shapes)
      for (Layout layout : {Layout::blocked, Layout::row_major, Layout::col_major})
        for (int threads : {2, 3})
          for (auto [kl, kbf] : {std::pair{1, 1}, {2, 3}, {3, 1}, {1, 4}})
            check_case({shape, {}}, dtype, threads, layout, kl, kbf);
  PlanRequest r;
  r.shape = {600, 5, 384};
  r.layout = Layout::col_major;
  for (DType dtype : dtypes) {
    r.dtype = dtype;
    CHECK(GemmPlan(r).copies(Layout::col_major, 600, 384, 600) == GemmCopies{false, false, false});
  }
  r.shape = {600, 9, 384};
  r.dtype = DType::f32;  // LIBXSMM's kernel reads a plain A; bf16's would need VNNI pairs
  CHECK(GemmPlan(r).copies(Layout::col_major, 600, 384, 600) == GemmCopies{false, false, false});
  if (__builtin_cpu_supports("avx512bf16")) {  // bf16's narrow kernel on pairs of K takes up to 12 columns
    r.dtype = DType::bf16;
    r.shape = {600, 12, 384};
    CHECK(GemmPlan(r).copies(Layout::col_major, 600, 384, 600) == GemmCopies{false, false, false});
    r.shape = {600, 13, 384};
    CHECK(GemmPlan(r).copies(Layout::col_major, 600, 384, 600) == GemmCopies{true, false, false});
  }
}

TEST_CASE("one column of tiles reads a tight A in place, and packs any other A (and B) panel by panel") {
  // 4096 x 8 x 4096 column-major: every A block is read once, so a tight A
  // is read in place and nothing is copied. Padded (or with alpha to fold)
  // it is packed inside the loop: a panel per thread of 1024 x 64 (256 KiB),
  // not the whole 64 MiB.
  PlanRequest r;
  r.shape = {4096, 8, 4096};
  r.threads = 2;
  r.layout = Layout::col_major;
  GemmPlan col(r);
  const Transpose none = Transpose::none;
  CHECK(col.copies(Layout::col_major, 4096, 4096, 4096) == GemmCopies{false, false, false});
  CHECK(col.workspace_bytes() == 0);
  CHECK(col.copies(Layout::col_major, none, none, 4096, 4096, 4096, 2.0) == GemmCopies{true, false, false});
  CHECK(col.copies(Layout::col_major, 4100, 4096, 4096) == GemmCopies{true, false, false});
  {
    AlignedBuffer a(std::size_t(4100) * 4096 * sizeof(float)), b(std::size_t(4096) * 8 * sizeof(float)),
        c(std::size_t(4096) * 8 * sizeof(float));
    std::memset(a.data(), 0, a.bytes());
    std::memset(b.data(), 0, b.bytes());
    col.gemm(Layout::col_major, a.data(), 4100, b.data(), 4096, c.data(), 4096);
    CHECK(col.workspace_bytes() == 2 * std::size_t(16 * 64 * 64) * sizeof(float));
  }
  r.layout = Layout::row_major;  // its loop's A is the caller's B
  r.shape = {8, 4096, 4096};
  CHECK(GemmPlan(r).workspace_bytes() == 0);
  r.layout = Layout::blocked;
  CHECK(GemmPlan(r).workspace_bytes() == 0);

  // A K slice longer than a panel is packed and multiplied a panel at a time
  // (60 x 64 blocks: 17 fp32 or 8 fp64 blocks a panel, of 65), ragged K.
  for (DType dtype : {DType::f32, DType::f64})
    for (int threads : {2, 3})
      for (auto [kl, kbf] : {std::pair{1, 1}, {2, 3}, {1, 8}, {3, 1}}) {
        check_case({{300, 12, 4099}, {}}, dtype, threads, Layout::col_major, kl, kbf);
        check_case({{12, 300, 4099}, {}}, dtype, threads, Layout::row_major, kl, kbf);
        // Tall, ragged panels: 2501 rows in blocks of 512 (whole vectors; the last 453), 2 blocks a panel.
        // Tight, they are read in place by LIBXSMM's plain kernels a K block at a time (kByBlockRows,
        // plan_decision.cpp), with K divided (300) or ending on a shorter block (1001).
        check_case({{2501, 7, 300}, {}}, dtype, threads, Layout::col_major, kl, kbf);
        check_case({{7, 2501, 300}, {}}, dtype, threads, Layout::row_major, kl, kbf);
        check_case({{2501, 7, 1001}, {}}, dtype, threads, Layout::col_major, kl, kbf);
        check_case({{7, 2501, 1001}, {}}, dtype, threads, Layout::row_major, kl, kbf);
        // One column of tiles 65-96 wide (bm 512, the last 453), read in place block by block.
        check_case({{2501, 90, 300}, {}}, dtype, threads, Layout::col_major, kl, kbf);
        check_case({{90, 2501, 1001}, {}}, dtype, threads, Layout::row_major, kl, kbf);
        check_case({{2501, 40, 300}, {}}, dtype, threads, Layout::col_major, kl, kbf);  // f64: 33-48
        // One row of tiles with a ragged K: the loop's B panel by panel; one tile: both.
        check_case({{12, 300, 4099}, {}}, dtype, threads, Layout::col_major, kl, kbf);
        check_case({{300, 12, 4099}, {}}, dtype, threads, Layout::row_major, kl, kbf);
        check_case({{12, 10, 4099}, {}}, dtype, threads, Layout::col_major, kl, kbf);
        check_case({{12, 10, 4099}, {}}, dtype, threads, Layout::row_major, kl, kbf);
      }
  // 60 x 4100 x 4099: a tight B (4099 x 4100, 64 MiB, a prime K: 64 blocks
  // of 64 and one of 3) is read in place; padded, it is packed 256 KiB a
  // thread at a time (20 blocks of 64 x 50: 50 divides N), not whole. A
  // (60 x 4099) is packed whole.
  r.layout = Layout::col_major;
  r.shape = {60, 4100, 4099};
  GemmPlan row_of_tiles(r);
  CHECK(row_of_tiles.copies(Layout::col_major, 60, 4099, 60) == GemmCopies{true, false, false});
  CHECK(row_of_tiles.workspace_bytes() == std::size_t(60 * 65 * 64) * sizeof(float));
  CHECK(row_of_tiles.copies(Layout::col_major, 60, 4100, 60) == GemmCopies{true, true, false});
  {
    std::vector<float> a(60 * 4099, 0.f), b(std::size_t(4100) * 4100, 0.f), c(60 * 4100);
    row_of_tiles.gemm(Layout::col_major, a.data(), 60, b.data(), 4100, c.data(), 60);
    CHECK(row_of_tiles.workspace_bytes() ==
          std::size_t(60 * 65 * 64) * sizeof(float) + 2 * std::size_t(20 * 64 * 50) * sizeof(float));
  }
  CHECK(choose_blocks({2501, 7, 300}, DType::f32, 2, Layout::col_major).bm == 512);
}

TEST_CASE(
    "a few columns of tiles over a large A: each task packs its row's panel once, for the row's tiles") {
  // Row-major 130 x 2050 x 1030: the loop's A (the caller's B; 8.9 MiB in
  // blocks of 64 x 61, padded) spans 3 columns of tiles 44 wide. Each task is
  // a row of tiles (Impl::row_span): the thread packs the row's panel (16 K
  // blocks a time, 244 KiB) and multiplies it into the row's three tiles,
  // rather than packing all of A up front.
  PlanRequest r;
  r.shape = {130, 2050, 1030};
  r.threads = 2;
  r.layout = Layout::row_major;
  GemmPlan rows(r);
  CHECK(rows.copies(Layout::row_major, 1030, 2050, 2050) == GemmCopies{false, true, false});
  {
    std::vector<float> a(130 * 1030, 0.f), b(1030 * 2050, 0.f), c(130 * 2050);
    rows.gemm(Layout::row_major, a.data(), 1030, b.data(), 2050, c.data(), 2050);
    CHECK(rows.workspace_bytes() == 2 * std::size_t(16 * 64 * 61) * sizeof(float));
  }
  // An A below kRowTaskMinBytes (row_tasks.hpp) (4.2 MiB) in 16 rows of tiles is
  // packed whole, up front.
  r.shape = {130, 1024, 1030};
  GemmPlan whole(r);
  {
    std::vector<float> a(130 * 1030, 0.f), b(1030 * 1024, 0.f), c(130 * 1024);
    whole.gemm(Layout::row_major, a.data(), 1030, b.data(), 1024, c.data(), 1024);
    CHECK(whole.workspace_bytes() == whole.b_elements() * sizeof(float));
  }
  // Fewer rows, the same number per thread (2 rows of 64 on 2 threads), take
  // row tasks whatever A's size (0.5 MiB): panels, not all of A. On 3 threads
  // they would not share out: A packed whole. (The loop's A is the caller's B.)
  r.shape = {130, 128, 1030};
  GemmPlan few_rows(r);
  r.threads = 3;
  GemmPlan uneven(r);
  r.threads = 2;
  {
    std::vector<float> a(130 * 1030, 0.f), b(1030 * 128, 0.f), c(130 * 128);
    few_rows.gemm(Layout::row_major, a.data(), 1030, b.data(), 128, c.data(), 128);
    CHECK(few_rows.workspace_bytes() < few_rows.b_elements() * sizeof(float));
    uneven.gemm(Layout::row_major, a.data(), 1030, b.data(), 128, c.data(), 128);
    CHECK(uneven.workspace_bytes() == uneven.b_elements() * sizeof(float));
  }

  // Rows too few for the threads (one row of tiles, 64 x 70000 in the loop's
  // terms: 17 MiB) keep a task per tile, and A packed whole.
  r.shape = {130, 64, 70000};
  GemmPlan one_row(r);
  {
    std::vector<float> a(std::size_t(130) * 70000, 0.f), b(std::size_t(70000) * 64, 0.f), c(130 * 64);
    one_row.gemm(Layout::row_major, a.data(), 70000, b.data(), 64, c.data(), 64);
    CHECK(one_row.workspace_bytes() >= one_row.b_elements() * sizeof(float));
  }

  // Right on every entry that takes row tasks: both plain layouts, ragged M,
  // N and K (a shorter last K block), layers, rounds, rows split unevenly
  // over 3 threads; fp64 (5 columns of tiles 26 wide) and bf16 (8.2 MiB).
  for (auto [threads, kl, kbf] : {std::tuple{2, 1, 1}, {3, 2, 3}, {2, 1, 8}, {3, 3, 1}}) {
    check_case({{130, 2050, 1030}, {}}, DType::f32, threads, Layout::row_major, kl, kbf);
    check_case({{2050, 130, 1030}, {}}, DType::f32, threads, Layout::col_major, kl, kbf);
  }
  check_case({{130, 2050, 1030}, {}}, DType::f64, 3, Layout::row_major, 2, 3);
  // Few rows that share out evenly (2 rows of tiles, times the layers).
  for (auto [kl, kbf] : {std::pair{1, 1}, {2, 3}, {1, 8}}) {
    check_case({{130, 128, 1030}, {}}, DType::f32, 2, Layout::row_major, kl, kbf);
    check_case({{128, 130, 1030}, {}}, DType::f32, 2, Layout::col_major, kl, kbf);
  }
  check_case({{130, 128, 1030}, {}}, DType::f64, 2, Layout::row_major, 1, 1);
  for (DType dtype : dtypes_here())
    if (dtype == DType::bf16) check_case({{130, 4100, 1030}, {}}, dtype, 2, Layout::row_major, 2, 3);
}

TEST_CASE("every copying path gives the same C") {
  PlanRequest r;
  r.shape = {64, 96, 128};
  r.blocks = {32, 32, 16};
  r.layout = Layout::row_major;
  r.k_layers = 2;
  r.k_block_factor = 3;
  // Its 6 rows of tasks (3 rows of tiles, 2 layers) do not share out evenly
  // over 4 threads: the loop's A is packed whole, not in row panels
  // (row_tasks_pay, row_tasks.hpp).
  r.threads = 4;
  GemmPlan plan(r);
  const std::int64_t pad = 5, lda = 128 + pad, ldb = 96 + pad, ldc = 96 + pad;
  std::vector<float> a(64 * lda), b(128 * ldb), tight_a(64 * 128), tight_b(128 * 96);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 13) - 6) / 8;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 7) - 3) / 4;
  for (int i = 0; i < 64; ++i) std::copy_n(&a[i * lda], 128, &tight_a[i * 128]);
  for (int i = 0; i < 128; ++i) std::copy_n(&b[i * ldb], 96, &tight_b[i * 96]);
  // Small integers over powers of two: every partial sum is exact, so any
  // summation order gives the same bits.
  // The plan holds the one packing buffer its own layout's tight call needs
  // (and the copy of C for the second layer); other calls add theirs once.
  const std::size_t scratch = plan.c_elements() * sizeof(float);
  CHECK(plan.workspace_bytes() == scratch + plan.b_elements() * sizeof(float));
  std::vector<float> one(64 * 96, -1);  // only B packed
  REQUIRE(plan.copies(Layout::row_major, 128, 96, 96) == GemmCopies{false, true, false});
  plan.gemm(Layout::row_major, tight_a.data(), 128, tight_b.data(), 96, one.data(), 96);
  std::vector<float> two(64 * 96, -1);  // A and B packed
  REQUIRE(plan.copies(Layout::row_major, lda, ldb, 96) == GemmCopies{true, true, false});
  plan.gemm(Layout::row_major, a.data(), lda, b.data(), ldb, two.data(), 96);
  CHECK(two == one);
  CHECK(plan.workspace_bytes() == scratch + (plan.a_elements() + plan.b_elements()) * sizeof(float));
  std::vector<float> three(64 * ldc, -1);  // everything copied
  REQUIRE(plan.copies(Layout::row_major, lda, ldb, ldc) == GemmCopies{true, true, true});
  plan.gemm(Layout::row_major, a.data(), lda, b.data(), ldb, three.data(), ldc);
  CHECK(plan.workspace_bytes() == 2 * scratch + (plan.a_elements() + plan.b_elements()) * sizeof(float));
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 96; ++j) REQUIRE(three[i * ldc + j] == one[i * 96 + j]);
  for (int i = 0; i < 64; ++i)
    for (int j = 96; j < ldc; ++j) REQUIRE(three[i * ldc + j] == -1);  // the padding is left alone
}

TEST_CASE("the blocked B: each column panel runs unbroken through K, as gemm.hpp documents") {
  // B(k, j) = k + 1000 j, exact in fp32; 70 x 100 column-major, ragged in
  // both dimensions (blocks 16 x 32 x 32 on 50 x 100 x 70: 3 K blocks, K
  // padded to 96; 4 column panels, the last 4 wide).
  PlanRequest r;
  r.shape = {50, 100, 70};
  r.blocks = {16, 32, 32};
  GemmPlan plan(r);
  const std::int64_t bn = 32, padded_k = 96;
  REQUIRE(plan.kb() == 3);
  REQUIRE(plan.nb() == 4);
  std::vector<float> b(70 * 100), packed(plan.b_elements(), -1);
  for (int j = 0; j < 100; ++j)
    for (int k = 0; k < 70; ++k) b[std::size_t(j) * 70 + k] = float(k + 1000 * j);
  plan.pack_b(Layout::col_major, b.data(), 70, packed.data());
  REQUIRE(packed.size() == std::size_t(4 * bn * padded_k));
  for (std::int64_t in = 0; in < 4; ++in)
    for (std::int64_t j = 0; j < bn; ++j)
      for (std::int64_t k = 0; k < padded_k; ++k) {
        const std::int64_t column = in * bn + j;
        const float expected = column < 100 && k < 70 ? float(k + 1000 * column) : 0.f;  // zero padding
        REQUIRE(packed[std::size_t(in * bn * padded_k + j * padded_k + k)] == expected);
      }

  // Plain operands with one row of tiles pack B a few K blocks at a time
  // inside the loop, so their B keeps bk x bn blocks: block (in, kb) holds
  // B(kb*bk + kk, in*bn + j) at j*bk + kk. Row-major 100 x 50 x 70 is the
  // loop's 50 x 100 x 70 with the caller's A as its B, one row of tiles (bm 64).
  r.layout = Layout::row_major;
  r.shape = {100, 50, 70};
  r.blocks = {32, 64, 32};  // the caller's terms: bm along M
  GemmPlan one_row(r);
  REQUIRE(one_row.kb() == 3);
  std::vector<float> a(100 * 70), blocks(one_row.a_elements(), -1);  // row-major A(i, k) = k + 1000 i
  for (int i = 0; i < 100; ++i)
    for (int k = 0; k < 70; ++k) a[std::size_t(i) * 70 + k] = float(k + 1000 * i);
  one_row.pack_a(Layout::row_major, a.data(), 70, blocks.data());
  for (std::int64_t in = 0; in < 4; ++in)
    for (std::int64_t kb = 0; kb < 3; ++kb)
      for (std::int64_t j = 0; j < 32; ++j)
        for (std::int64_t kk = 0; kk < 32; ++kk) {
          const std::int64_t row = in * 32 + j, k = kb * 32 + kk;
          const float expected = row < 100 && k < 70 ? float(k + 1000 * row) : 0.f;
          REQUIRE(blocks[std::size_t(((in * 3 + kb) * 32 + j) * 32 + kk)] == expected);
        }
}

TEST_CASE("more threads than tasks still computes every tile") {
  check_case({{5, 3, 40}, {}}, DType::f32, 7, Layout::row_major, 1, 1);
  check_case({{70, 70, 300}, {}}, DType::f32, 16, Layout::blocked, 4, 2);
}

// A call small enough for one thread runs without a team of its own
// (core/src/team.hpp); called from inside the caller's own parallel region it
// must still compute every tile itself, not the share of them an orphaned
// worksharing loop would hand it in the caller's team.
TEST_CASE("a small call inside the caller's own parallel region computes all of C") {
  const GemmShape s{48, 40, 56};  // 9 tiles of 16 x 16, 0.2 MFLOP: one thread
  const int callers = 3;
  std::vector<std::vector<float>> a(callers), b(callers), c(callers);
  for (int t = 0; t < callers; ++t) {
    a[t].resize(std::size_t(s.m * s.k));
    b[t].resize(std::size_t(s.k * s.n));
    c[t].assign(std::size_t(s.m * s.n), -1.0f);
    fill_uniform(a[t].data(), a[t].size(), DType::f32, 100 + t);
    fill_uniform(b[t].data(), b[t].size(), DType::f32, 200 + t);
  }
  for (Layout layout : {Layout::row_major, Layout::col_major}) {
    const bool row = layout == Layout::row_major;
    const std::int64_t lda = row ? s.k : s.m, ldb = row ? s.n : s.k, ldc = row ? s.n : s.m;
#pragma omp parallel num_threads(callers)
    {
      const int t = omp_get_thread_num();
      GemmPlan plan({.shape = s, .threads = 2, .blocks = {16, 16, 8}, .layout = layout});
      plan.gemm(layout, a[t].data(), lda, b[t].data(), ldb, c[t].data(), ldc);
    }
    for (int t = 0; t < callers; ++t)
      for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j) {
          double want = 0;
          for (std::int64_t p = 0; p < s.k; ++p)
            want += double(a[t][std::size_t(row ? i * lda + p : p * lda + i)]) *
                    double(b[t][std::size_t(row ? p * ldb + j : j * ldb + p)]);
          const float got = c[t][std::size_t(row ? i * ldc + j : j * ldc + i)];
          INFO("caller " << t << " layout " << to_string(layout) << " C(" << i << ", " << j << ")");
          REQUIRE(std::abs(double(got) - want) <= 1e-4 * (1 + std::abs(want)));
        }
  }
}

TEST_CASE("knobs beyond the K blocks available are clamped and reported") {
  PlanRequest r;
  r.shape = {128, 128, 64};  // one K block of 64
  r.k_layers = 8;
  r.k_block_factor = 8;
  GemmPlan one(r);
  CHECK(one.kb() == 1);
  CHECK(one.k_layers() == 1);
  CHECK(one.k_block_factor() == 1);

  r.shape = {128, 128, 320};  // five K blocks of 64: 3 layers get 1 or 2 blocks each
  r.k_layers = 3;
  r.k_block_factor = 4;
  GemmPlan five(r);
  CHECK(five.kb() == 5);
  CHECK(five.k_layers() == 3);
  CHECK(five.k_block_factor() == 1);
}

TEST_CASE("block-size rule: equal blocks, padding below one element per block, bm in whole vectors") {
  for (std::int64_t d : {1, 7, 63, 64, 65, 100, 1000, 2000, 2048, 4097}) {
    for (DType dtype : {DType::f32, DType::f64}) {
      const BlockSizes b = choose_blocks({d, d, d}, dtype, 2);
      const int vector = dtype == DType::f32 ? 16 : 8;
      for (int size : {b.bn, b.bk}) {
        const std::int64_t blocks = (d + size - 1) / size;
        CHECK(size <= std::max<std::int64_t>(d, 1));
        CHECK(blocks * size - d < blocks);  // padding < one element per block
        CHECK(size <= 64);
      }
      // bm: one block of exactly M, or whole vectors and as many blocks as
      // equal blocks would take (padding < one vector per block).
      const std::int64_t target = dtype == DType::f32 ? 64 : 32, blocks = (d + target - 1) / target;
      if (d <= target) {
        CHECK(b.bm == d);
      } else {
        CHECK(b.bm % vector == 0);
        CHECK((d + b.bm - 1) / b.bm == blocks);
        CHECK(blocks * b.bm - d < blocks * vector);
      }
    }
  }
  CHECK(choose_blocks({1, 1, 1}, DType::f32, 2).bm == 1);
  CHECK(choose_blocks({64, 64, 63}, DType::bf16, 2).bk % 2 == 0);
  // Plain operands: a bk in [32, 64] that divides K (B can then be read in
  // place), even for bf16; none for a prime K; the blocked layout pads.
  const Layout row = Layout::row_major, blocked = Layout::blocked;
  CHECK(choose_blocks({300, 300, 700}, DType::f32, 2, row).bk == 50);
  CHECK(choose_blocks({300, 300, 1100}, DType::f32, 2, Layout::col_major).bk == 55);
  CHECK(choose_blocks({300, 300, 4099}, DType::f32, 2, row).bk == 64);
  CHECK(choose_blocks({300, 300, 700}, DType::f32, 2, blocked).bk == 64);
  CHECK(choose_blocks({300, 300, 1100}, DType::f64, 2, row).bk == 55);
  // And bm, bn that divide M and N (C then stays in place over several
  // rounds); bm, the vectorised dimension, in whole vectors of 16 floats.
  const BlockSizes divided = choose_blocks({6000, 600, 1100}, DType::f32, 2, row);
  CHECK(divided.bm == 48);
  CHECK(divided.bn == 60);
  CHECK(choose_blocks({2000, 3000, 700}, DType::f32, 2, row).bm == 64);  // no multiple of 16 divides 2000
  CHECK(choose_blocks({600, 6000, 1100}, DType::f32, 2, row).bm == 64);  // 60 divides 600: not whole vectors
  CHECK(choose_blocks({2000, 3000, 700}, DType::f64, 2, row).bm == 16);  // 8 doubles a vector
  CHECK(choose_blocks({6000, 600, 1100}, DType::f32, 2, blocked).bm == 64);  // 94 blocks: 6016
  // Thin M against a B read in place (plain operands): blocks of 8 columns;
  // not from four vectors of M up, nor in the blocked layout.
  CHECK(choose_blocks({16, 4096, 4096}, DType::f32, 2, row).bn == 8);
  CHECK(choose_blocks({32, 4096, 4096}, DType::f32, 2, row).bn == 8);
  CHECK(choose_blocks({64, 4096, 4096}, DType::f32, 2, row).bn == 64);
  CHECK(choose_blocks({16, 4096, 4099}, DType::f32, 2, row).bn == 8);
  CHECK(choose_blocks({16, 4096, 4096}, DType::f32, 2, blocked).bn == 64);
  // Wide tiles where a B read in place meets a loop M of three or four
  // blocks, while every thread keeps four tiles; not in the blocked layout.
  CHECK(choose_blocks({256, 512, 1024}, DType::f32, 2, row).bn == 128);
  CHECK(choose_blocks({256, 256, 256}, DType::f32, 2, Layout::col_major).bn == 128);
  CHECK(choose_blocks({200, 1000, 512}, DType::f32, 2, row).bn == 125);  // divides N
  CHECK(choose_blocks({128, 512, 512}, DType::f64, 2, row).bn == 64);    // f64's target is 32
  CHECK(choose_blocks({256, 512, 1024}, DType::f32, 2, blocked).bn == 64);
  CHECK(choose_blocks({512, 512, 1024}, DType::f32, 2, row).bn == 64);  // eight blocks of M
  CHECK(choose_blocks({128, 512, 1024}, DType::f32, 2, row).bn == 64);  // two
  CHECK(choose_blocks({256, 256, 256}, DType::f32, 16, row).bn == 64);  // 4 tiles for 16 threads
  CHECK(choose_blocks({256, 8192, 256}, DType::f32, 16, row).bn == 128);
  CHECK(choose_blocks({256, 4096, 16}, DType::f32, 2, row).bn == 64);  // a K of one block: tall tiles
  {  // on AMX tiles a K step is 32: bk is a multiple of it (K padded) once above 32
    PlanRequest probe;
    probe.shape = {64, 64, 64};
    probe.dtype = DType::bf16;
    bool tiles = false;
    try {
      tiles = GemmPlan(probe).kernel() == "amx";
    } catch (const Error&) {  // no bf16 kernels on this CPU
    }
    const int bk = choose_blocks({1500, 3500, 800}, DType::bf16, 2).bk;
    CHECK((tiles ? bk == 64 : (bk == 62 || bk == 64)));  // 64: tiles the OS would not grant
    CHECK(choose_blocks({64, 64, 30}, DType::bf16, 2).bk == 30);
  }
}

TEST_CASE("block-size rule: tall tiles for a K of one block and for plain panels, as the threads allow") {
  // C-write bound: bm grows to 1024 (equal blocks), bn and bk stay.
  const BlockSizes thin = choose_blocks({4096, 4096, 16}, DType::f32, 2);
  CHECK(thin.bm == 1024);
  CHECK(thin.bn == 64);
  CHECK(thin.bk == 16);
  // 4 blocks; a ragged tall block in whole vectors (1024, not 1023); one that divides M stays.
  CHECK(choose_blocks({4091, 4093, 61}, DType::f32, 2).bm == 1024);
  CHECK(choose_blocks({4091, 4093, 8}, DType::f64, 2, Layout::col_major).bm == 1024);
  CHECK(choose_blocks({1000, 1000, 16}, DType::f32, 2, Layout::col_major).bm == 1000);
  // Plain operands: tall only while a row of the K block is at most a cache
  // line (fp32 K <= 16, bf16 <= 32, fp64 <= 8); the blocked layout up to 64.
  CHECK(choose_blocks({1024, 1024, 64}, DType::f32, 2, Layout::row_major).bm == 64);
  CHECK(choose_blocks({3000, 2000, 48}, DType::f32, 2, Layout::col_major).bm == 64);
  CHECK(choose_blocks({2048, 2048, 32}, DType::f32, 2, Layout::col_major).bm == 64);
  CHECK(choose_blocks({2048, 2048, 16}, DType::f32, 2, Layout::col_major).bm == 1024);
  CHECK(choose_blocks({1024, 1024, 64}, DType::f32, 2, Layout::blocked).bm == 1024);
  CHECK(choose_blocks({2048, 2048, 32}, DType::bf16, 2, Layout::row_major).bm == 1024);
  CHECK(choose_blocks({2048, 2048, 34}, DType::bf16, 2, Layout::row_major).bm == 64);
  CHECK(choose_blocks({4096, 4096, 16}, DType::f64, 2, Layout::row_major).bm == 32);
  CHECK(choose_blocks({4096, 4096, 8}, DType::f64, 2, Layout::row_major).bm == 1024);
  CHECK(choose_blocks({4079, 4096, 8}, DType::bf16, 2).bm == 1024);  // 1020 rounded up, 4 blocks still
  CHECK(choose_blocks({2048, 2048, 65}, DType::f32, 2).bm == 64);    // two K blocks: the usual rule
  CHECK(choose_blocks({50, 4096, 3}, DType::f64, 2).bm == 50);
  // Fewer tiles than 2 per thread: bm shrinks (1024 x 128 x 8, 2 threads:
  // 2 column tiles need 2 row tiles, bm 512); never below the usual rule.
  CHECK(choose_blocks({1024, 128, 8}, DType::f32, 2).bm == 512);
  CHECK(choose_blocks({1024, 128, 8}, DType::f32, 16).bm == 64);
  CHECK(choose_blocks({1024, 4096, 8}, DType::f32, 16).bm == 1024);
  // One column of tiles on plain operands (A packed panel by panel): tall,
  // whatever K; the blocked layout keeps the usual rule.
  CHECK(choose_blocks({4096, 8, 4096}, DType::f32, 2, Layout::col_major).bm == 1024);
  CHECK(choose_blocks({4096, 8, 4096}, DType::f32, 2, Layout::row_major).bm == 1024);
  CHECK(choose_blocks({4096, 8, 4096}, DType::f32, 2, Layout::blocked).bm == 64);
  CHECK(choose_blocks({1024, 3, 1024}, DType::f32, 2, Layout::col_major).bm == 256);  // 4 tiles for 2 threads
  CHECK(choose_blocks({4096, 32, 4096}, DType::f64, 2, Layout::col_major).bm == 1024);
  // A loop N of one to one and a half blocks: one column of 512-row tiles
  // rather than two narrow columns, where every thread gets two tiles of 256
  // rows or more; beyond, two columns of the usual rule.
  const BlockSizes one_column = choose_blocks({4096, 96, 4096}, DType::f32, 2, Layout::row_major);
  CHECK(one_column.bm == 512);
  CHECK(one_column.bn == 96);
  CHECK(choose_blocks({4096, 65, 4096}, DType::f32, 2, Layout::col_major).bn == 65);
  CHECK(choose_blocks({1024, 65, 4096}, DType::f32, 2, Layout::col_major).bm == 256);  // 4 tiles, 2 threads
  CHECK(choose_blocks({1023, 96, 4096}, DType::f32, 2, Layout::col_major).bn == 48);   // tiles too short
  CHECK(choose_blocks({4096, 96, 4096}, DType::f32, 16, Layout::col_major).bn == 48);  // for 16 threads
  CHECK(choose_blocks({4096, 97, 4096}, DType::f32, 2, Layout::col_major).bn == 49);   // two columns
  CHECK(choose_blocks({4096, 96, 4096}, DType::f32, 2, Layout::blocked).bn == 48);
  CHECK(choose_blocks({4096, 48, 4096}, DType::f64, 2, Layout::col_major).bn == 48);  // f64's target is 32
  CHECK(choose_blocks({4096, 49, 4096}, DType::f64, 2, Layout::col_major).bm == 32);
  // bf16 whose A the loop packs panel by panel (one column of tiles wider
  // than the narrow kernel takes, on LIBXSMM: SFC_AMX=0 where the CPU has
  // tiles): tiles of 128 rows.
  setenv("SFC_AMX", "0", 1);
  CHECK(choose_blocks({4096, 64, 4096}, DType::bf16, 2, Layout::row_major).bm == 128);
  CHECK(choose_blocks({4096, 96, 4096}, DType::bf16, 2, Layout::col_major).bm == 128);
  CHECK(choose_blocks({4096, 64, 4096}, DType::f32, 2, Layout::row_major).bm == 1024);  // A in place
  CHECK(choose_blocks({4096, 8, 4096}, DType::bf16, 2, Layout::row_major).bm == 1024);  // the narrow kernel
  CHECK(choose_blocks({4096, 64, 16}, DType::bf16, 2, Layout::row_major).bm == 1024);   // a K of one block
  CHECK(choose_blocks({4096, 64, 4096}, DType::bf16, 2, Layout::blocked).bm == 64);
  // bf16 row tasks (2-8 columns of tiles over an A of 8 MiB or more, with
  // four rows of tiles a thread): tiles of 128 rows.
  CHECK(choose_blocks({4096, 128, 4096}, DType::bf16, 2, Layout::row_major).bm == 128);
  CHECK(choose_blocks({4096, 512, 1024}, DType::bf16, 2, Layout::col_major).bm == 128);
  CHECK(choose_blocks({4096, 128, 4096}, DType::f32, 2, Layout::row_major).bm == 64);
  CHECK(choose_blocks({1024, 128, 1024}, DType::bf16, 2, Layout::row_major).bm == 64);   // A of 2 MiB
  CHECK(choose_blocks({4096, 640, 4096}, DType::bf16, 2, Layout::row_major).bm == 64);   // 10 columns
  CHECK(choose_blocks({4096, 128, 4096}, DType::bf16, 16, Layout::row_major).bm == 64);  // 2 rows a thread
  CHECK(choose_blocks({4096, 128, 4096}, DType::bf16, 2, Layout::blocked).bm == 64);
  unsetenv("SFC_AMX");
}

TEST_CASE(
    "a C of 4 MiB and more written once is stored past the caches (blocked: a K of 64 or less), and equals C "
    "stored as usual") {
  const std::vector<DType> dtypes = dtypes_here();
  for (DType dtype : dtypes)
    for (Layout layout : {Layout::blocked, Layout::col_major, Layout::row_major})
      for (const GemmShape& shape : {GemmShape{1024, 1024, 16}, GemmShape{1024, 1030, 40}}) {
        PlanRequest r{.shape = shape, .dtype = dtype, .threads = 3, .layout = layout};
        GemmPlan plan(r);
        INFO(shape.m << "x" << shape.n << "x" << shape.k << " " << to_string(dtype) << " "
                     << to_string(layout));
        CHECK(plan.streams_c());
        const CheckResult res = check_against_reference(plan, layout, 5);
        CHECK(res.rel_error <= res.bound);
        if (layout == Layout::blocked) continue;
        // The same product into a C on no cache line's start: written as
        // usual, the same bits.
        const std::size_t in = input_size(dtype), out = output_size(dtype);
        const std::size_t mk = std::size_t(shape.m * shape.k), kn = std::size_t(shape.k * shape.n),
                          mn = std::size_t(shape.m * shape.n);
        AlignedBuffer a(mk * in), b(kn * in), c(mn * out), shifted((mn + 1) * out);
        fill_uniform(a.data(), mk, dtype, 1);
        fill_uniform(b.data(), kn, dtype, 2);
        const bool row = layout == Layout::row_major;
        const std::int64_t lda = row ? shape.k : shape.m, ldb = row ? shape.n : shape.k,
                           ldc = row ? shape.n : shape.m;
        plan.gemm(layout, a.data(), lda, b.data(), ldb, c.data(), ldc);
        plan.gemm(layout, a.data(), lda, b.data(), ldb, shifted.as<char>() + out, ldc);
        CHECK(std::memcmp(c.data(), shifted.as<char>() + out, mn * out) == 0);
      }
  // Written more than once (layers, rounds), or small: as usual.
  CHECK(!GemmPlan({.shape = {1024, 1024, 256}, .k_layers = 2, .layout = Layout::row_major}).streams_c());
  CHECK(
      !GemmPlan({.shape = {1024, 1024, 256}, .k_block_factor = 2, .layout = Layout::row_major}).streams_c());
  CHECK(!GemmPlan({.shape = {512, 512, 16}}).streams_c());
  // A blocked C only where K is short (kStreamBlockedMaxK, plan_decision.cpp); plain ones at any K.
  for (DType dtype : dtypes) {
    CHECK(GemmPlan({.shape = {1024, 1024, 64}, .dtype = dtype}).streams_c());
    CHECK(!GemmPlan({.shape = {1024, 1024, 96}, .dtype = dtype}).streams_c());
  }
  CHECK(GemmPlan({.shape = {1024, 1024, 256}, .threads = 2, .layout = Layout::row_major}).streams_c());
  CHECK(GemmPlan({.shape = {1024, 1024, 256}, .threads = 2, .layout = Layout::col_major}).streams_c());
  // Such a plan run on blocked operands (execute) writes its blocked C as usual over that K: still right.
  for (DType dtype : dtypes) {
    GemmPlan plain({.shape = {1024, 1024, 96}, .dtype = dtype, .threads = 2, .layout = Layout::row_major});
    CHECK(plain.streams_c());
    const CheckResult res = check_against_reference(plain, Layout::blocked, 7);
    CHECK(res.rel_error <= res.bound);
  }
}

TEST_CASE("deterministic: the same plan gives bitwise identical C run after run") {
  PlanRequest r;
  r.shape = {200, 150, 700};
  r.threads = 3;
  r.k_layers = 3;
  r.k_block_factor = 2;
  GemmPlan plan(r);
  AlignedBuffer a(plan.a_elements() * 4), b(plan.b_elements() * 4), c1(plan.c_elements() * 4),
      c2(plan.c_elements() * 4);
  fill_uniform(a.data(), plan.a_elements(), DType::f32, 1);
  fill_uniform(b.data(), plan.b_elements(), DType::f32, 2);
  plan.execute(a.data(), b.data(), c1.data());
  for (int run = 0; run < 5; ++run) {
    std::memset(c2.data(), 0xff, c2.bytes());  // garbage in C must not matter (beta = 0)
    plan.execute(a.data(), b.data(), c2.data());
    REQUIRE(std::memcmp(c1.data(), c2.data(), c1.bytes()) == 0);
  }
}

TEST_CASE("bf16: correct where the CPU has the kernels, a clear error elsewhere") {
  PlanRequest r;
  r.shape = {100, 70, 390};
  r.dtype = DType::bf16;
  r.k_layers = 2;
  r.k_block_factor = 3;
  try {
    for (Layout layout : {Layout::blocked, Layout::row_major, Layout::col_major}) {
      r.layout = layout;
      r.shape = {100, 70, 390};  // ragged: everything copied
      GemmPlan ragged(r);
      const CheckResult res = check_against_reference(ragged, layout);
      CHECK(res.rel_error <= res.bound);
      r.shape = {128, 192, 256};  // divided: one operand packed (in VNNI pairs), the other and C in place
      GemmPlan exact(r);
      if (layout != Layout::blocked)
        CHECK(
            exact.copies(layout, layout == Layout::row_major ? 256 : 128,
                         layout == Layout::row_major ? 192 : 256, layout == Layout::row_major ? 192 : 128) ==
            (layout == Layout::row_major ? GemmCopies{false, true, false} : GemmCopies{true, false, false}));
      const CheckResult in_place = check_against_reference(exact, layout);
      CHECK(in_place.rel_error <= in_place.bound);
      // Tall tiles (a K of one block), and one column and one
      // row of tiles, whose operands are packed (in VNNI pairs) panel by panel.
      // One column of tiles ragged in M (601) keeps C in place over the rounds;
      // 90 wide in 512-row tiles (loop M 1100, but 1024 and up).
      for (GemmShape thin : {GemmShape{600, 300, 16}, GemmShape{20, 600, 390}, GemmShape{600, 20, 390},
                             GemmShape{20, 601, 390}, GemmShape{601, 20, 390}, GemmShape{1100, 90, 390},
                             GemmShape{90, 1100, 390}}) {
        r.shape = thin;
        GemmPlan plan(r);
        const CheckResult res_thin = check_against_reference(plan, layout);
        CAPTURE(to_string(thin));
        CHECK(res_thin.rel_error <= res_thin.bound);
      }
    }
  } catch (const Error& e) {
    CHECK_MESSAGE(std::string(e.what()).find("not supported on this CPU") != std::string::npos,
                  std::string(e.what()));
  }
  // Forcing LIBXSMM to AVX2 code generation removes the bf16 kernels: the CLI
  // must refuse, not call through a NULL kernel (SFC_AMX=0: nor use core's
  // AMX kernel, on a CPU that has tiles).
  const auto res = test::run_cli("gemm 64 64 64 --dtype bf16 --reps 1", "LIBXSMM_TARGET=hsw SFC_AMX=0");
  CHECK(res.exit_code == 2);
  CHECK(res.output.find("not supported on this CPU") != std::string::npos);
}

TEST_CASE("bf16 on AMX tiles where the CPU has them, LIBXSMM with SFC_AMX=0: every tile shape right") {
  // The AMX kernel covers a block with 32 x 32 register blocks of up to four
  // 16 x 16 tiles; these blocks leave every kind of remainder (rows, columns,
  // both; a K step below 32: 28, 2, 22), with several layers and rounds (C
  // accumulated) and every entry.
  struct TileCase {
    GemmShape shape;
    BlockSizes blocks;
  };
  const TileCase tile_cases[] = {{{100, 70, 390}, {}},        {{37, 45, 64}, {16, 16, 32}},
                                 {{77, 50, 58}, {48, 40, 2}}, {{130, 97, 198}, {80, 33, 66}},
                                 {{600, 20, 390}, {}},        {{33, 700, 44}, {}}};
  PlanRequest r;
  r.dtype = DType::bf16;
  r.k_layers = 2;
  r.k_block_factor = 2;
  try {
    for (const char* amx : {"0", "1"}) {
      setenv("SFC_AMX", amx, 1);
      for (Layout layout : {Layout::blocked, Layout::row_major, Layout::col_major})
        for (const TileCase& c : tile_cases) {
          r.layout = layout;
          r.shape = c.shape;
          r.blocks = c.blocks;
          GemmPlan plan(r);
          if (amx[0] == '0') CHECK(plan.kernel() == "libxsmm");
          const CheckResult res = check_against_reference(plan, layout);
          CAPTURE(std::string(amx));
          CAPTURE(to_string(c.shape));
          CAPTURE(int(layout));
          CHECK(res.rel_error <= res.bound);
        }
      MESSAGE("SFC_AMX=" << std::string(amx) << ": bf16 kernel " << GemmPlan(r).kernel());
    }
  } catch (const Error& e) {  // no bf16 kernels on this CPU (neither LIBXSMM's nor tiles)
    CHECK_MESSAGE(std::string(e.what()).find("not supported on this CPU") != std::string::npos,
                  std::string(e.what()));
  }
  unsetenv("SFC_AMX");
  r.dtype = DType::f32;  // fp32 never runs on tiles
  CHECK(GemmPlan(r).kernel() == "libxsmm");
}

TEST_CASE("bad requests throw sfc::Error") {
  PlanRequest r;
  r.shape = {0, 10, 10};
  CHECK_THROWS_AS(GemmPlan{r}, Error);
  r.shape = {10, 10, 10};
  r.k_layers = 9;
  CHECK_THROWS_AS(GemmPlan{r}, Error);
  r.k_layers = 1;
  r.k_block_factor = 0;
  CHECK_THROWS_AS(GemmPlan{r}, Error);
  r.k_block_factor = 1;
  r.threads = -1;
  CHECK_THROWS_AS(GemmPlan{r}, Error);
  r.threads = 1;
  r.shape = {1 << 30, 1 << 30, 1 << 30};  // 4 EiB of C copies: refused before allocating
  r.k_layers = 2;
  CHECK_THROWS_AS(GemmPlan{r}, Error);
  r.shape = {10, 10, 10};
  r.k_layers = 1;
  GemmPlan plan(r);
  std::vector<float> a(100), b(100), c(100);
  CHECK_THROWS_AS(plan.gemm(Layout::row_major, a.data(), 10, b.data(), 10, c.data(), 10),
                  Error);                                                         // blocked-only plan
  CHECK_THROWS_AS(plan.pack_a(Layout::row_major, a.data(), 5, a.data()), Error);  // lda < K
}

TEST_CASE("kernel rate: each dtype's kernel is timed where the CPU has one, as plans run it") {
  CHECK(kernel_gflops_per_core(1, 1) > 0);
  CHECK(kernel_gflops_per_core(2, 1, DType::f64) > 0);
  bool bf16_plans = true;
  try {
    PlanRequest probe;
    probe.shape = {64, 64, 64};
    probe.dtype = DType::bf16;
    GemmPlan plan(probe);
  } catch (const Error&) {  // no bf16 kernel on this CPU: neither has the rate
    bf16_plans = false;
  }
  if (bf16_plans)
    CHECK(kernel_gflops_per_core(1, 1, DType::bf16) > 0);
  else
    CHECK_THROWS_AS(kernel_gflops_per_core(1, 1, DType::bf16), Error);
  CHECK_THROWS_AS(kernel_gflops_per_core(0), Error);
}
