#include "shape_source.hpp"

#include "sfc/error.hpp"

namespace sfc::cli {

void ShapeSource::add_options(CLI::App* command) {
  command->add_option("--grid", grid,
                      "Shapes: \"256,512,1024\" (cubed) or \"m=512:8192:x2 n=128,256 k=1024\"");
  command->add_option("--shapes", shapes_file,
                      "Shapes from a file of \"M N K\" lines (# comments), e.g. data/grids/small.shapes");
  command->add_option("--random", random, "COUNT random shapes, log-uniform over --range")
      ->check(CLI::PositiveNumber);
  command->add_option("--range", range, "LO:HI of every dimension for --random")->capture_default_str();
  command->add_option("--seed", seed, "Seed for --random (the same seed gives the same shapes everywhere)")
      ->capture_default_str();
}

ShapeGrid ShapeSource::shapes() const {
  const int sources = !grid.empty() + !shapes_file.empty() + (random > 0);
  if (sources != 1) throw Error("give exactly one of --grid SPEC, --shapes FILE or --random COUNT");
  if (!grid.empty()) return ShapeGrid::parse(grid);
  if (!shapes_file.empty()) return ShapeGrid::load(shapes_file);
  const auto [lo, hi] = parse_dimension_range(range);
  return ShapeGrid::random(random, lo, hi, seed);
}

}  // namespace sfc::cli
