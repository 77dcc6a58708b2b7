// Writers for a benchmark's outcome: the fixed-width table for people, CSV
// and JSON for programs, and an SVG plot in the style of the paper's figures
// 5 and 8 (GFLOP/s per shape, shapes sorted by arithmetic intensity, one
// series per implementation plus the dashed roofline).
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "sfc/bench.hpp"
#include "sfc/bench_summary.hpp"

namespace sfc {

// What the report header says about the run.
struct BenchContext {
  std::string command_line;  // exactly as typed
  std::string platform;      // CPU, ISA, threads
  DType dtype = DType::f32;
  Layout layout = Layout::blocked;
  int threads = 1;
  std::string config_source;           // "best", "default", "2,4", ...
  std::vector<std::string> libraries;  // one line per peer that ran
  Roofline roofline;
  // The arithmetic ceiling: fma_peak_gflops() scaled to the dtype
  // (simd_rate), or for bf16 on a CPU with AMX tiles tile_peak_gflops()
  // (peak_on_tiles); 0 = not measured.
  double peak_gflops = 0;
  bool peak_on_tiles = false;
  // A GEMM's fastest run beat the peak even after it was measured again
  // (recheck_peak): the peak is too low to judge by, and the report shows no
  // ratios to it, only a line that says so.
  bool peak_measured_low = false;
  bool peak_remeasured = false;  // measured again after the shapes
  std::string peak_name() const { return peak_on_tiles ? "tile peak" : "FMA peak"; }
  std::string machine_load;  // other work on the machine, which skews timings
  // Set variables that steer an implementation (OPENBLAS_CORETYPE, OMP_*,
  // LIBXSMM_TARGET, ...), "NAME=value": a run is only reproducible with them.
  std::vector<std::string> environment;
};

// The line a report gives instead of ratios to a peak measured low.
std::string peak_measured_low_note(const BenchContext& context);

void write_table(std::ostream& out, const BenchContext& context, const BenchResult& result,
                 const BenchSummary& summary);
void write_csv(std::ostream& out, const BenchResult& result, const BenchSummary& summary);
nlohmann::json to_json(const BenchContext& context, const BenchResult& result, const BenchSummary& summary);
// A standalone SVG document (opens in a browser).
// A shape is marked noisy (in the table and the plot) when one of its
// timings' standard deviation exceeds this fraction of the mean: a run was
// slowed by something else (on a shared machine, usually another process).
inline constexpr double kNoisyVariation = 0.25;
bool noisy(const ShapeMeasurement& m);

void write_svg(std::ostream& out, const BenchContext& context, const BenchResult& result);

}  // namespace sfc
