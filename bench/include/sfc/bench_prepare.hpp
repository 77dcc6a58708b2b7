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

}  // namespace sfc
