// The shape readers a user feeds by hand: grid specs (--grid), shape files
// (--shapes), dimension ranges (--range) and shard specs (--shard). The input's
// first line goes to the one-line parsers, the whole input to the file reader.
// Every shape a reader returns must be inside the bounds it promises.
#include <string_view>

#include "fuzz_input.hpp"
#include "sfc/error.hpp"
#include "sfc/shape_grid.hpp"

namespace {

void check_bounds(const sfc::ShapeGrid& grid) {
  for (const sfc::GemmShape& s : grid.shapes())
    for (const std::int64_t d : {s.m, s.n, s.k})
      if (d < 1 || d > sfc::ShapeGrid::kMaxDimension) sfc::fuzz::broken("a shape beyond the promised bounds");
}

template <class Parse>
void refused_or_fine(Parse&& parse) {
  try {
    parse();
  } catch (const sfc::Error&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view line = text.substr(0, text.find('\n'));
  refused_or_fine([&] { check_bounds(sfc::ShapeGrid::parse(line)); });
  refused_or_fine([&] {
    const auto [lo, hi] = sfc::parse_dimension_range(line);
    if (lo < 1 || hi < lo || hi > sfc::ShapeGrid::kMaxDimension)
      sfc::fuzz::broken("a range beyond its bounds");
  });
  refused_or_fine([&] {
    const sfc::Shard shard = sfc::Shard::parse(line);
    if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
      sfc::fuzz::broken("a shard out of range");
  });
  refused_or_fine(
      [&] { check_bounds(sfc::ShapeGrid::load(sfc::fuzz::write_input(data, size, "input.shapes"))); });
  return 0;
}
