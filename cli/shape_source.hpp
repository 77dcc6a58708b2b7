// Where a command's shapes come from, with the same three options on every
// command that takes shapes (tune, bench): --grid SPEC, --shapes FILE, or
// --random COUNT (with --range and --seed).
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "sfc/shape_grid.hpp"

namespace sfc::cli {

struct ShapeSource {
  std::string grid, shapes_file, range = "128:8192";
  int random = 0;
  std::uint64_t seed = 1;

  // Registers --grid, --shapes, --random, --range and --seed on `command`.
  void add_options(CLI::App* command);
  // The shapes of the one source given; sfc::Error unless exactly one is.
  ShapeGrid shapes() const;
};

}  // namespace sfc::cli
