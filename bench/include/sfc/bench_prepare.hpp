// What a bench run measures before it times the shapes: the calibration the
// roofline rests on (stored in the tuning tables, else measured now), the
// roofline, the arithmetic peak above it, and which kernel bf16 runs on.
#pragma once
#include <string>
#include <vector>

#include "sfc/bench.hpp"
#include "sfc/bench_report.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

// The calibration a tuning table of this machine holds (gamma per core and
// the shared beta carry over between thread counts): the one at `threads`
// threads, else another's; zeros when none does.
Calibration stored_calibration(const std::vector<TuningTable>& tables, int threads);

// Fills the report's roofline, peak_gflops and peak_on_tiles for `options`
// (dtype, threads), and for bf16 adds SFC-CA's kernel to context.platform.
// The calibration is the one `tables` (read from `db`) store, else
// calibrate() now (a few seconds); it is returned for the choice of
// configurations that rests on it (--config model).
Calibration prepare_bench(const BenchOptions& options, const std::vector<TuningTable>& tables,
                          const std::string& db, BenchContext& context);

// The arithmetic peak of `options` (dtype, threads): the tile peak for bf16
// where the CPU has AMX tiles, else the FMA peak scaled to the dtype; sets
// context.peak_on_tiles. Each is the best of several short runs.
double measure_peak(const BenchOptions& options, BenchContext& context);

// When a GEMM of `result` ran faster than context.peak_gflops, the peak was
// measured while something else had the cores: measures it again (keeping
// the higher of the two), and if a GEMM still beats it sets
// context.peak_measured_low. Returns whether it measured again.
bool recheck_peak(const BenchOptions& options, const BenchResult& result, BenchContext& context);

}  // namespace sfc
