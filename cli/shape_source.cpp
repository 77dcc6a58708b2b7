#include "shape_source.hpp"

#include "commands.hpp"
#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/shape_record.hpp"

namespace sfc::cli {

void ShapeSource::add_options(CLI::App* command) {
  command->add_option("--grid", grid,
                      "Shapes: \"256,512,1024\" (cubed) or \"m=512:8192:x2 n=128,256 k=1024\"");
  command->add_option("--shapes", shapes_file,
                      "Shapes from a file of \"M N K\" lines (# comments), e.g. data/grids/small.shapes");
  CLI::Option* random_option =
      command->add_option("--random", random, "COUNT random shapes, log-uniform over --range")
          ->check(CLI::Range(1, ShapeGrid::kMaxRandomShapes));
  // Given without --random they would be ignored: refused instead.
  command->add_option("--range", range, "LO:HI of every dimension for --random")
      ->capture_default_str()
      ->needs(random_option);
  command->add_option("--seed", seed, "Seed for --random (the same seed gives the same shapes everywhere)")
      ->check(seed_value)
      ->capture_default_str()
      ->needs(random_option);
  CLI::Option* record = command->add_option(
      "--from-record", record_file,
      "Shapes from a shape record (SFC_RECORD=FILE), largest share of the estimated GEMM time first");
  command->add_option("--top", top, "With --from-record: only the N shapes of the largest shares")
      ->check(CLI::PositiveNumber)
      ->needs(record);
  command
      ->add_option("--min-share", min_share,
                   "With --from-record: only shapes of at least this fraction of the estimated time "
                   "(0.01 = 1%)")
      ->check(real_range(0.0, 1.0))
      ->needs(record);
}

void ShapeSource::check_one_source() const {
  const int sources = !grid.empty() + !shapes_file.empty() + (random > 0) + from_record();
  if (sources != 1)
    throw Error("give exactly one of --grid SPEC, --shapes FILE, --random COUNT or --from-record FILE");
}

std::vector<TuningTarget> ShapeSource::record_targets(const std::vector<TuningTable>& tables) const {
  check_one_source();
  std::vector<TuningTarget> targets =
      rank_record(ShapeRecord::load(record_file), tables, detect_platform()).tuning_targets();
  std::erase_if(targets, [&](const TuningTarget& t) { return t.share < min_share || t.calls == 0; });
  if (top > 0 && targets.size() > std::size_t(top)) targets.resize(std::size_t(top));
  return targets;
}

ShapeGrid ShapeSource::shapes() const {
  check_one_source();
  if (!grid.empty()) return ShapeGrid::parse(grid);
  if (from_record()) {
    std::vector<GemmShape> shapes;
    for (const TuningTarget& t : record_targets({})) shapes.push_back(t.shape);
    return ShapeGrid(shapes);
  }
  if (!shapes_file.empty()) return ShapeGrid::load(shapes_file);
  const auto [lo, hi] = parse_dimension_range(range);
  return ShapeGrid::random(random, lo, hi, seed);
}

}  // namespace sfc::cli
