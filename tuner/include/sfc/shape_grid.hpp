// ShapeGrid: the GEMM shapes a tuning run (or a benchmark) walks, in order.
//
//   ShapeGrid::parse("256,512,1024")                        27 shapes: the list for M, N and K
//   ShapeGrid::parse("m=512:8192:x2 n=128,256 k=1024")      one list per dimension
//   ShapeGrid::load("data/grids/small.shapes")              "M N K" lines, '#' comments
//   ShapeGrid::random(100, 128, 16384, 7)                   log-uniform, reproducible
//
// Lists are comma-separated values or ranges LO:HI[:STEP], STEP xF (multiply)
// or +D (add); a grid range without a step doubles (LO:HI = LO:HI:x2).
// Cross products run M outermost, K innermost. Every error is an sfc::Error
// naming the spec, or the file and line, and the reason.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sfc/gemm.hpp"

namespace sfc {

// "I/N": this process tunes every N-th shape of the grid, starting at shape I
// (0 <= I < N), e.g. I = $SLURM_ARRAY_TASK_ID of an --array=0-(N-1) job.
struct Shard {
  int index = 0, count = 1;
  static Shard parse(std::string_view text);  // throws sfc::Error
  std::string to_string() const;
};

class ShapeGrid {
 public:
  static constexpr std::int64_t kMaxDimension = 1 << 20;
  // The most shapes random() draws: far past any tuning run, short of a draw
  // whose bookkeeping alone would take gigabytes.
  static constexpr int kMaxRandomShapes = 1'000'000;

  ShapeGrid() = default;
  // Keeps the order; a shape listed again is dropped.
  explicit ShapeGrid(const std::vector<GemmShape>& shapes);

  static ShapeGrid parse(std::string_view spec);
  static ShapeGrid load(const std::string& path);
  // `count` distinct shapes, each dimension drawn log-uniformly from [lo, hi]
  // with a generator fully specified by `seed` (the same on every machine,
  // so the shards of a cluster run agree on the grid).
  static ShapeGrid random(int count, std::int64_t lo, std::int64_t hi, std::uint64_t seed);

  ShapeGrid shard(const Shard& shard) const;

  const std::vector<GemmShape>& shapes() const { return shapes_; }
  std::size_t size() const { return shapes_.size(); }
  bool empty() const { return shapes_.empty(); }

 private:
  std::vector<GemmShape> shapes_;
};

// "LO:HI" for --range: 1 <= LO <= HI <= ShapeGrid::kMaxDimension; throws sfc::Error.
std::pair<std::int64_t, std::int64_t> parse_dimension_range(std::string_view text);

}  // namespace sfc
