// GilbertCurve: the generalized Hilbert curve over an arbitrary W x H grid
// (after J. Cerveny's construction, written here from the description in the
// paper, section II-B). Index i in [0, W*H) maps to a cell (x, y); consecutive
// indices are edge neighbours, except for the single diagonal step the
// construction needs when the longer side is odd and the shorter even.
#pragma once
#include <cstdint>
#include <vector>

namespace sfc {

struct GridCell {
  std::int32_t x;  // along the width  (GEMM: the M tile index im)
  std::int32_t y;  // along the height (GEMM: the N tile index in)
};

class GilbertCurve {
 public:
  // Builds the whole map once: O(W*H) time and memory. Throws sfc::Error if a
  // side is < 1 or the grid has more than 2^31 cells.
  GilbertCurve(std::int64_t width, std::int64_t height);

  std::int64_t width() const { return width_; }
  std::int64_t height() const { return height_; }
  std::int64_t size() const { return static_cast<std::int64_t>(cells_.size()); }
  const GridCell& operator[](std::int64_t i) const { return cells_[static_cast<std::size_t>(i)]; }
  const std::vector<GridCell>& cells() const { return cells_; }

 private:
  std::int64_t width_, height_;
  std::vector<GridCell> cells_;
};

}  // namespace sfc
