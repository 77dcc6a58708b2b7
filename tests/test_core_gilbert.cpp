// The generalized Hilbert curve: coverage, locality, and the paper's Lemma 1.
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/gilbert.hpp"

using sfc::GilbertCurve;

TEST_CASE("every grid up to 64x64: each cell once, edge steps but for one allowed diagonal") {
  for (int w = 1; w <= 64; ++w)
    for (int h = 1; h <= 64; ++h) {
      const GilbertCurve curve(w, h);
      REQUIRE(curve.size() == w * h);
      std::vector<int> seen(std::size_t(w * h), 0);
      int diagonals = 0;
      for (std::int64_t i = 0; i < curve.size(); ++i) {
        const auto c = curve[i];
        REQUIRE((c.x >= 0 && c.x < w && c.y >= 0 && c.y < h));
        ++seen[std::size_t(c.y * w + c.x)];
        if (i == 0) continue;
        const int dx = std::abs(c.x - curve[i - 1].x), dy = std::abs(c.y - curve[i - 1].y);
        if (dx == 1 && dy == 1)
          ++diagonals;
        else
          REQUIRE_MESSAGE(dx + dy == 1, "jump at index " << i << " on " << w << "x" << h);
      }
      for (int s : seen) REQUIRE(s == 1);
      const int longer = w >= h ? w : h, shorter = w >= h ? h : w;
      // A diagonal is only ever needed when the longer side is odd and the
      // shorter even; then there is exactly one, except on 2-wide strips,
      // which the curve snakes along with edge steps only.
      const bool may_need = longer % 2 == 1 && shorter % 2 == 0;
      const int expected = may_need && shorter > 2 ? 1 : 0;
      CHECK_MESSAGE(diagonals == expected, w << "x" << h << " has " << diagonals << " diagonal steps");
    }
}

TEST_CASE("starts at the origin corner") {
  for (int w = 1; w <= 16; ++w)
    for (int h = 1; h <= 16; ++h) {
      const GilbertCurve curve(w, h);
      CHECK(curve[0].x == 0);
      CHECK(curve[0].y == 0);
    }
}

TEST_CASE("Lemma 1: power-of-two grid and threads give aligned rectangular patches") {
  for (int a = 0; a <= 6; ++a)
    for (int b = 0; b <= 6; ++b) {
      const int w = 1 << a, h = 1 << b;
      const GilbertCurve curve(w, h);
      for (int threads = 1; threads <= w * h; threads *= 2) {
        const int chunk = w * h / threads;
        for (int t = 0; t < threads; ++t) {
          int x0 = w, y0 = h, x1 = -1, y1 = -1;
          for (int i = t * chunk; i < (t + 1) * chunk; ++i) {
            x0 = std::min(x0, int(curve[i].x)), x1 = std::max(x1, int(curve[i].x));
            y0 = std::min(y0, int(curve[i].y)), y1 = std::max(y1, int(curve[i].y));
          }
          const int pw = x1 - x0 + 1, ph = y1 - y0 + 1;
          INFO(w << "x" << h << " grid, " << threads << " threads, thread " << t);
          REQUIRE(pw * ph == chunk);  // the chunk fills its bounding box: a rectangle
          REQUIRE(x0 % pw == 0);      // aligned to its own size
          REQUIRE(y0 % ph == 0);
        }
      }
    }
}

TEST_CASE("degenerate grids are refused with a clear error") {
  CHECK_THROWS_AS(GilbertCurve(0, 5), sfc::Error);
  CHECK_THROWS_AS(GilbertCurve(5, -1), sfc::Error);
  CHECK_THROWS_AS(GilbertCurve(1 << 20, 1 << 20), sfc::Error);
}
