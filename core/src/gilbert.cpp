// Generalized Hilbert curve, following the recursive rules of the paper
// (section II-B): a side of length 1 is walked linearly; a rectangle much
// longer than wide is cut into two halves along its major axis, walked one
// after the other; otherwise it is cut into three parts: the starting corner
// block with the axes swapped, the far strip, and the remaining corner block
// walked backwards. Odd lengths are split so that each part keeps an even
// major side where possible, which is what keeps every step an edge step
// (but for the one unavoidable diagonal).
#include "sfc/gilbert.hpp"

#include <cstdlib>
#include <limits>
#include <string>

#include "sfc/error.hpp"

namespace sfc {
namespace {

// Halving must round toward minus infinity: the recursion walks negative
// direction vectors, and C++ '/' rounds toward zero.
std::int64_t half(std::int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }
std::int64_t sign(std::int64_t v) { return (v > 0) - (v < 0); }

struct CurveBuilder {
  std::vector<GridCell>& out;

  void emit(std::int64_t x, std::int64_t y) {
    out.push_back({static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)});
  }

  // Walks the rectangle with corner (x, y), major axis (ax, ay) and minor axis (bx, by).
  void walk(std::int64_t x, std::int64_t y, std::int64_t ax, std::int64_t ay, std::int64_t bx,
            std::int64_t by) {
    const std::int64_t w = std::llabs(ax + ay), h = std::llabs(bx + by);
    const std::int64_t dax = sign(ax), day = sign(ay), dbx = sign(bx), dby = sign(by);
    if (h == 1) {
      for (std::int64_t i = 0; i < w; ++i, x += dax, y += day) emit(x, y);
      return;
    }
    if (w == 1) {
      for (std::int64_t i = 0; i < h; ++i, x += dbx, y += dby) emit(x, y);
      return;
    }
    std::int64_t ax2 = half(ax), ay2 = half(ay), bx2 = half(bx), by2 = half(by);
    const std::int64_t w2 = std::llabs(ax2 + ay2), h2 = std::llabs(bx2 + by2);
    if (2 * w > 3 * h) {  // long: two halves along the major axis
      if ((w2 % 2) && w > 2) ax2 += dax, ay2 += day;
      walk(x, y, ax2, ay2, bx, by);
      walk(x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by);
    } else {  // squarish: corner block (axes swapped), far strip, other corner backwards
      if ((h2 % 2) && h > 2) bx2 += dbx, by2 += dby;
      walk(x, y, bx2, by2, ax2, ay2);
      walk(x + bx2, y + by2, ax, ay, bx - bx2, by - by2);
      walk(x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2), -(ay - ay2));
    }
  }
};

}  // namespace

GilbertCurve::GilbertCurve(std::int64_t width, std::int64_t height) : width_(width), height_(height) {
  if (width < 1 || height < 1)
    throw Error("curve grid must be at least 1 x 1, got " + std::to_string(width) + " x " +
                std::to_string(height));
  if (width > std::numeric_limits<std::int32_t>::max() / height)
    throw Error("curve grid " + std::to_string(width) + " x " + std::to_string(height) +
                " has more than 2^31 cells");
  cells_.reserve(static_cast<std::size_t>(width * height));
  CurveBuilder builder{cells_};
  if (width >= height)
    builder.walk(0, 0, width, 0, 0, height);
  else
    builder.walk(0, 0, 0, height, width, 0);
}

}  // namespace sfc
