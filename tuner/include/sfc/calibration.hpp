// calibrate(): measures, once per platform, the two numbers the analytical
// model (and the bench's roofline) rest on. Takes a few seconds.
//
//   gamma: GFLOP/s of one core running LIBXSMM's fp32 batch-reduce GEMM with
//          the engine's block sizes on data in its L2, while every one of the
//          `threads` threads runs it at once (so clocks and shared resources
//          are as under a real GEMM).
//   beta:  GB/s that all `threads` threads read together from a buffer far
//          larger than the caches (the cold-input footprint of the timings).
// Each thread is timed by its own CPU clock: a busy machine's time slicing
// does not lower the numbers.
#pragma once
#include "sfc/tuning_table.hpp"

namespace sfc {

// Throws sfc::Error if threads < 1 or LIBXSMM has no fp32 kernel for this CPU.
Calibration calibrate(int threads);

}  // namespace sfc
