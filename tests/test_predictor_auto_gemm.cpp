// sfc::gemm and AutoGemm: libsfcconf's configuration, plans reused per shape,
// correct results from plain row- and column-major matrices.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "sfc/auto_gemm.hpp"
#include "sfc/error.hpp"
#include "support.hpp"
#include "test_predictor_support.hpp"

using namespace sfc;

namespace {

// Largest |C - A*B| over all entries, with a plain triple loop as reference.
double max_error(const GemmShape& s, Layout layout, const std::vector<float>& a, const std::vector<float>& b,
                 const std::vector<float>& c) {
  const bool row = layout == Layout::row_major;
  auto at = [row](const std::vector<float>& x, std::int64_t i, std::int64_t j, std::int64_t rows,
                  std::int64_t cols) { return double(row ? x[i * cols + j] : x[j * rows + i]); };
  double worst = 0;
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < s.k; ++p) sum += at(a, i, p, s.m, s.k) * at(b, p, j, s.k, s.n);
      worst = std::max(worst, std::abs(sum - at(c, i, j, s.m, s.n)));
    }
  return worst;
}

struct Operands {
  std::vector<float> a, b, c;
  explicit Operands(const GemmShape& s, unsigned seed = 5)
      : a(std::size_t(s.m * s.k)), b(std::size_t(s.k * s.n)), c(std::size_t(s.m * s.n)) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : a) x = u(random);
    for (float& x : b) x = u(random);
  }
};

}  // namespace

TEST_CASE("auto gemm: tuned configuration, correct result, one plan per shape") {
  const test::TempDir dir;
  TuningTable table = test::synthetic_table(test::region_shapes(), {200, 60});
  table.platform = detect_platform(2);
  table.save(dir.file("here.sfctable"));
  AutoGemm g(dir.file("here.sfctable").c_str());

  const Answer tuned = g.configuration({256, 256, 4096}, DType::f32, 2);
  CHECK(tuned.tier == Tier::exact);
  CHECK(tuned.knobs == Knobs{2, 4});

  const GemmShape s{97, 75, 300};  // ragged: every dimension padded
  for (Layout layout : {Layout::row_major, Layout::col_major}) {
    Operands x(s);
    const std::int64_t lda = layout == Layout::row_major ? s.k : s.m;
    const std::int64_t ldb = layout == Layout::row_major ? s.n : s.k;
    const std::int64_t ldc = layout == Layout::row_major ? s.n : s.m;
    g.gemm(layout, s, DType::f32, x.a.data(), lda, x.b.data(), ldb, x.c.data(), ldc, 2);
    CHECK(max_error(s, layout, x.a, x.b, x.c) < 1e-3);
  }
  CHECK(g.cached_plans() == 2);  // one per layout
  Operands again(s, 9);
  g.gemm(Layout::row_major, s, DType::f32, again.a.data(), s.k, again.b.data(), s.n, again.c.data(), s.n, 2);
  CHECK(max_error(s, Layout::row_major, again.a, again.b, again.c) < 1e-3);
  CHECK(g.cached_plans() == 2);  // reused, not rebuilt
}

TEST_CASE("auto gemm: concurrent callers each get a plan of their own") {
  AutoGemm g;  // no tuning file: the default tier
  const GemmShape s{64, 48, 200};
  std::vector<Operands> work;
  for (unsigned t = 0; t < 3; ++t) work.emplace_back(s, t);
  std::vector<std::thread> callers;
  for (Operands& x : work)
    callers.emplace_back([&g, &x, s] {
      for (int rep = 0; rep < 3; ++rep)
        g.gemm(Layout::row_major, s, DType::f32, x.a.data(), s.k, x.b.data(), s.n, x.c.data(), s.n, 1);
    });
  for (std::thread& t : callers) t.join();
  for (const Operands& x : work) CHECK(max_error(s, Layout::row_major, x.a, x.b, x.c) < 1e-3);
  CHECK(g.cached_plans() >= 1);
  CHECK(g.cached_plans() <= 3);
}

TEST_CASE("auto gemm: the process-wide call, and refusals") {
  const GemmShape s{33, 17, 65};
  Operands x(s);
  sfc::gemm(Layout::row_major, s, DType::f32, x.a.data(), s.k, x.b.data(), s.n, x.c.data(), s.n);
  CHECK(max_error(s, Layout::row_major, x.a, x.b, x.c) < 1e-3);

  CHECK_THROWS_AS(AutoGemm("/nonexistent/tuning.db"), Error);
  AutoGemm g;
  CHECK_THROWS_AS(
      g.gemm(Layout::row_major, {0, 4, 4}, DType::f32, x.a.data(), 4, x.b.data(), 4, x.c.data(), 4), Error);
}
