// Where a command's shapes come from, with the same options on every command
// that takes shapes (tune, bench): --grid SPEC, --shapes FILE, --random COUNT
// (with --range and --seed), or --from-record FILE (a shape record that
// SFC_RECORD wrote, its shapes ranked by their share of the estimated GEMM
// time, cut by --top and --min-share).
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sfc/record_ranking.hpp"
#include "sfc/shape_grid.hpp"

namespace sfc::cli {

struct ShapeSource {
  std::string grid, shapes_file, record_file, range = "128:8192";
  int random = 0, top = 0;
  double min_share = 0;
  std::uint64_t seed = 1;

  // Registers --grid, --shapes, --random, --range, --seed, --from-record,
  // --top and --min-share on `command`.
  void add_options(CLI::App* command);
  // The shapes of the one source given; sfc::Error unless exactly one is.
  // A record's shapes come largest share first, each once (whatever its
  // dtype, threads and layout: see record_targets for those).
  ShapeGrid shapes() const;

  bool from_record() const { return !record_file.empty(); }
  // The record's tuning targets, largest share first, cut by --top and
  // --min-share; `tables` calibrate the model that weighs them (see
  // rank_record). sfc::Error for a record that cannot be read.
  std::vector<TuningTarget> record_targets(const std::vector<TuningTable>& tables) const;

 private:
  void check_one_source() const;  // sfc::Error unless exactly one source is given
};

}  // namespace sfc::cli
