#include "sfc/bench_prepare.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "sfc/bench_summary.hpp"
#include "sfc/calibration.hpp"
#include "sfc/error.hpp"
#include "sfc/fma_peak.hpp"
#include "sfc/gemm.hpp"
#include "sfc/kernel_rate.hpp"
#include "sfc/roofline.hpp"

namespace sfc {

Calibration stored_calibration(const std::vector<TuningTable>& tables, int threads) {
  Calibration found;
  for (const TuningTable& table : tables) {
    const Calibration& c = table.calibration;
    if (c.gamma_gflops_per_core <= 0 || c.beta_gbytes_per_s <= 0) continue;
    if (table.platform.threads == threads) return c;
    if (found.gamma_gflops_per_core <= 0) found = c;
  }
  return found;
}

Calibration prepare_bench(const BenchOptions& options, const std::vector<TuningTable>& tables,
                          const std::string& db, BenchContext& context) {
  // Which kernel SFC-CA's bf16 runs on decides its figures (AMX tiles or
  // LIBXSMM's AVX512-BF16): the report says so.
  if (options.dtype == DType::bf16) {
    PlanRequest probe;
    probe.shape = {64, 64, 64};
    probe.dtype = DType::bf16;
    context.platform += ", SFC-CA bf16 kernel " + std::string(GemmPlan(probe).kernel());
  }

  // The roofline (and --config model) rest on a calibration: the one stored
  // for this platform when the database has it, else measured now.
  Calibration calibration = stored_calibration(tables, options.threads);
  std::string calibration_source = "stored calibration in " + db;
  if (calibration.gamma_gflops_per_core <= 0 || calibration.beta_gbytes_per_s <= 0) {
    spdlog::info("calibrating the roofline on {} threads (a few seconds)", options.threads);
    calibration = calibrate(options.threads);
    calibration_source = "calibrate() on the spot";
  }
  context.roofline =
      Roofline::from_calibration(calibration, options.dtype, options.threads, calibration_source);
  if (options.dtype == DType::bf16) {
    // The calibration's gamma is LIBXSMM's fp32 kernel; bf16's (on AMX tiles
    // where the CPU has them) runs several times faster: timed here instead
    // (about 0.1 s). Without a bf16 kernel the plans fail later, with the reason.
    try {
      context.roofline.gflops_per_core = kernel_gflops_per_core(options.threads, 3, DType::bf16);
      context.roofline.source += "; bf16 kernel timed on the spot";
    } catch (const Error&) {}
  }
  // The ceiling above the roofline's gamma (which is LIBXSMM's kernel in cache):
  // how far any implementation could still go on this machine. bf16 on a CPU
  // with AMX tiles has the tile unit's, about ten times the FMAs'.
  context.peak_gflops = measure_peak(options, context);
  return calibration;
}

double measure_peak(const BenchOptions& options, BenchContext& context) {
  double peak = options.dtype == DType::bf16 ? tile_peak_gflops(options.threads) : 0;
  context.peak_on_tiles = peak > 0;
  if (!context.peak_on_tiles) peak = fma_peak_gflops(options.threads) * simd_rate(options.dtype);
  return peak;
}

bool recheck_peak(const BenchOptions& options, const BenchResult& result, BenchContext& context) {
  if (context.peak_gflops <= 0 || highest_measured_gflops(result) <= context.peak_gflops) return false;
  spdlog::info("a GEMM ran faster than the {} measured at the start: measuring it again",
               context.peak_name());
  context.peak_gflops = std::max(context.peak_gflops, measure_peak(options, context));
  context.peak_remeasured = true;
  context.peak_measured_low = highest_measured_gflops(result) > context.peak_gflops;
  if (context.peak_measured_low) spdlog::warn("{}", peak_measured_low_note(context));
  return true;
}

}  // namespace sfc
