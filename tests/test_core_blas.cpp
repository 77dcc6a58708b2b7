// GemmPlan::gemm with BLAS semantics: C = alpha op(A) op(B) + beta C for every
// transpose, layout and element type, against an fp64 reference with the
// gamma bound; and BLAS's rules: beta = 0 never reads C, alpha = 0 never reads
// A or B, leading dimensions below their minimum are refused.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "sfc/aligned_buffer.hpp"
#include "sfc/gemm.hpp"
#include "sfc/verify.hpp"

using namespace sfc;

namespace {

double value(const void* data, std::size_t i, DType dtype) {
  switch (dtype) {
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::f64: return static_cast<const double*>(data)[i];
    case DType::bf16: {
      const std::uint32_t bits = std::uint32_t(static_cast<const std::uint16_t*>(data)[i]) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
  }
  return 0;
}

// Element (r, c) of a stored matrix, and its index.
std::size_t at(Layout layout, std::int64_t r, std::int64_t c, std::int64_t ld) {
  return std::size_t(layout == Layout::row_major ? r * ld + c : c * ld + r);
}

struct Call {
  Layout layout;
  Transpose ta, tb;
  double alpha, beta;
};

// Runs one call on random operands with leading dimensions 3 beyond their
// minimum, C starting as NaN when beta is 0, and checks every element of C.
void check_call(GemmPlan& plan, const Call& call, std::int64_t pad = 3) {
  const GemmShape s = plan.shape();
  const DType dt = plan.dtype();
  const Layout other = call.layout == Layout::row_major ? Layout::col_major : Layout::row_major;
  const Layout la = call.ta == Transpose::none ? call.layout : other;
  const Layout lb = call.tb == Transpose::none ? call.layout : other;
  // Stored as op(X)'s shape read through la / lb.
  const std::int64_t lda = (la == Layout::row_major ? s.k : s.m) + pad;
  const std::int64_t ldb = (lb == Layout::row_major ? s.n : s.k) + pad;
  const std::int64_t ldc = (call.layout == Layout::row_major ? s.n : s.m) + pad;
  const std::size_t in = input_size(dt), out = output_size(dt);
  const std::size_t a_count = std::size_t((la == Layout::row_major ? s.m : s.k) * lda);
  const std::size_t b_count = std::size_t((lb == Layout::row_major ? s.k : s.n) * ldb);
  const std::size_t c_count = std::size_t((call.layout == Layout::row_major ? s.m : s.n) * ldc);
  AlignedBuffer a(a_count * in), b(b_count * in), c(c_count * out), c0(c_count * out);
  fill_uniform(a.data(), a_count, dt, 3);
  fill_uniform(b.data(), b_count, dt, 4);
  const DType c_type = dt == DType::f64 ? DType::f64 : DType::f32;
  fill_uniform(c.data(), c_count, c_type, 5);
  if (call.beta == 0) {  // must not leak into the result
    for (std::size_t i = 0; i < c_count; ++i)
      if (c_type == DType::f64)
        c.as<double>()[i] = std::numeric_limits<double>::quiet_NaN();
      else
        c.as<float>()[i] = std::numeric_limits<float>::infinity();
  }
  std::memcpy(c0.data(), c.data(), c_count * out);

  plan.gemm(call.layout, call.ta, call.tb, call.alpha, a.data(), lda, b.data(), ldb, call.beta, c.data(),
            ldc);

  const double u = dt == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double gamma = double(s.k + 2) * u / (1 - double(s.k + 2) * u);
  double worst = 0;
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0, magnitude = 0;
      for (std::int64_t p = 0; p < s.k; ++p) {
        const double x = value(a.data(), at(la, i, p, lda), dt) * value(b.data(), at(lb, p, j, ldb), dt);
        sum += x;
        magnitude += std::fabs(x);
      }
      const std::size_t ci = at(call.layout, i, j, ldc);
      const double before = call.beta == 0 ? 0 : value(c0.data(), ci, c_type);
      const double want = call.alpha * sum + call.beta * before;
      const double bound =
          gamma * (std::fabs(call.alpha) * magnitude + std::fabs(call.beta * before)) + 1e-300;
      const double got = value(c.data(), ci, c_type);
      worst = std::max(worst, std::isfinite(got) ? std::fabs(got - want) / bound : HUGE_VAL);
    }
  CHECK(worst <= 1.0);
  // The padding beyond each row of C is the caller's: untouched.
  if (call.layout == Layout::row_major && ldc > s.n) {
    const std::size_t first_pad = at(call.layout, 0, s.n, ldc) * out;
    CHECK(std::memcmp(c.as<char>() + first_pad, c0.as<char>() + first_pad, out) == 0);
  }
}

bool supported(DType dtype) {
  try {
    GemmPlan({.shape = {8, 8, 8}, .dtype = dtype, .threads = 1});
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("blas: C = alpha op(A) op(B) + beta C for every transpose, layout and type") {
  const Call scalars[] = {{Layout::row_major, Transpose::none, Transpose::none, 1, 0},
                          {Layout::row_major, Transpose::none, Transpose::none, 0.5, 0},
                          {Layout::row_major, Transpose::none, Transpose::none, 1, 1},
                          {Layout::row_major, Transpose::none, Transpose::none, -2, 0.25}};
  for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
    if (!supported(dt)) continue;
    // Ragged (edge tiles; B packed, then B in place with K divided), divided by the blocks, and
    // one column of tiles in the loop's terms (A packed panel by panel), K in 3 blocks.
    for (GemmShape shape :
         {GemmShape{37, 50, 70}, GemmShape{37, 50, 64}, GemmShape{64, 128, 64}, GemmShape{37, 20, 130}})
      for (Layout layout : {Layout::row_major, Layout::col_major}) {
        GemmPlan plan({.shape = shape, .dtype = dt, .threads = 2, .k_layers = 2, .layout = layout});
        for (Layout call_layout : {Layout::row_major, Layout::col_major})
          for (Transpose ta : {Transpose::none, Transpose::transpose})
            for (Transpose tb : {Transpose::none, Transpose::transpose})
              for (Call call : scalars) {
                call.layout = call_layout;
                call.ta = ta;
                call.tb = tb;
                CAPTURE(to_string(dt));
                CAPTURE(to_string(shape));
                CAPTURE(to_string(layout));
                CAPTURE(to_string(call_layout));
                CAPTURE(int(ta));
                CAPTURE(int(tb));
                CAPTURE(call.alpha);
                CAPTURE(call.beta);
                check_call(plan, call);
              }
      }
  }
}

TEST_CASE("blas: tight, divided matrices write C in place for every transpose, alpha and beta") {
  // Blocks divide M, N, K and the leading dimensions are tight: C is written
  // in place (layer 0 accumulating into C that the prologue scaled by beta),
  // alpha rides on the packed operand, and the operand the loop streams is
  // read in place when it is stored untransposed.
  const Transpose none = Transpose::none, trans = Transpose::transpose;
  for (DType dt : {DType::f32, DType::f64})
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (int layers : {1, 3})
        for (std::int64_t k : {192, 191}) {  // 191: B in place ends on a shorter K block
          const GemmShape s{128, 64, k};
          GemmPlan plan({.shape = s, .dtype = dt, .threads = 2, .k_layers = layers, .layout = layout});
          const bool row = layout == Layout::row_major;
          for (Transpose ta : {none, trans})
            for (Transpose tb : {none, trans}) {
              // Tight leading dimensions of op(A) = M x K and op(B) = K x N as stored.
              const bool a_rows = row == (ta == none), b_rows = row == (tb == none);
              const std::int64_t lda = a_rows ? s.k : s.m, ldb = b_rows ? s.n : s.k, ldc = row ? s.n : s.m;
              const GemmCopies copy = plan.copies(layout, ta, tb, lda, ldb, ldc, 2.0);
              CHECK_FALSE(copy.c);
              // The streamed operand (B of a column-major plan, A of a row-major one) is read in
              // place when stored untransposed; transposed, where LIBXSMM has TRANS_B kernels.
              if ((row ? ta : tb) == none) CHECK((row ? !copy.a : !copy.b));
              CHECK((row ? copy.b : copy.a));  // the other one is packed
              for (auto [alpha, beta] : {std::pair{1.0, 0.0}, {1.0, 1.0}, {-2.0, 0.25}, {0.5, -1.0}}) {
                CAPTURE(to_string(dt));
                CAPTURE(to_string(layout));
                CAPTURE(layers);
                CAPTURE(k);
                CAPTURE(int(ta));
                CAPTURE(int(tb));
                const double a_ = alpha, b_ = beta;  // (clang 14 cannot capture structured bindings)
                CAPTURE(a_);
                CAPTURE(b_);
                check_call(plan, {layout, ta, tb, alpha, beta}, 0);
              }
            }
        }
  // bf16: alpha cannot ride on a bf16 operand, so C is copied and alpha applied to the fp32 result.
  if (supported(DType::bf16)) {
    GemmPlan plan({.shape = {128, 64, 192}, .dtype = DType::bf16, .threads = 2, .layout = Layout::row_major});
    CHECK_FALSE(plan.copies(Layout::row_major, none, none, 192, 64, 64, 1.0).c);
    CHECK(plan.copies(Layout::row_major, none, none, 192, 64, 64, 2.0).c);
    check_call(plan, {Layout::row_major, none, trans, 2.0, 0.5}, 0);
  }
}

TEST_CASE("blas: alpha = 0 reads neither A nor B, and beta = 0 then writes zeros over NaN") {
  GemmPlan plan({.shape = {5, 7, 9}, .dtype = DType::f32, .threads = 2, .layout = Layout::row_major});
  std::vector<float> c(5 * 7, std::numeric_limits<float>::quiet_NaN());
  plan.gemm(Layout::row_major, Transpose::none, Transpose::none, 0.0, nullptr, 9, nullptr, 7, 0.0, c.data(),
            7);
  for (float v : c) CHECK(v == 0.0f);
  std::fill(c.begin(), c.end(), 2.0f);
  plan.gemm(Layout::row_major, Transpose::none, Transpose::none, 0.0, nullptr, 9, nullptr, 7, 1.5, c.data(),
            7);
  for (float v : c) CHECK(v == 3.0f);
}

TEST_CASE(
    "blas: leading dimensions below their minimum, and BLAS arguments on the blocked layout, are refused") {
  GemmPlan plan({.shape = {5, 7, 9}, .dtype = DType::f32, .threads = 1, .layout = Layout::row_major});
  std::vector<float> a(100), b(100), c(100);
  // Row-major A^T is stored 9 x 5: lda >= 5 (not 9).
  CHECK_NOTHROW(plan.gemm(Layout::row_major, Transpose::transpose, Transpose::none, 1, a.data(), 5, b.data(),
                          7, 0, c.data(), 7));
  CHECK_THROWS_AS(plan.gemm(Layout::row_major, Transpose::none, Transpose::none, 1, a.data(), 8, b.data(), 7,
                            0, c.data(), 7),
                  Error);
  CHECK_THROWS_AS(plan.gemm(Layout::row_major, Transpose::none, Transpose::transpose, 1, a.data(), 9,
                            b.data(), 8, 0, c.data(), 7),
                  Error);
  CHECK_THROWS_AS(plan.gemm(Layout::col_major, Transpose::none, Transpose::none, 1, a.data(), 5, b.data(), 9,
                            0, c.data(), 4),
                  Error);
  CHECK_THROWS_AS(plan.gemm(Layout::blocked, Transpose::transpose, Transpose::none, 1, a.data(), 5, b.data(),
                            7, 0, c.data(), 7),
                  Error);
}
