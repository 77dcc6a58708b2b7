// The speed of the engine's own kernel: what the analytical model calls gamma
// (predictor/calibration.hpp), measured here because only the engine knows
// which kernel it dispatches and on which blocks.
#pragma once
#include "sfc/gemm.hpp"

namespace sfc {

// GFLOP/s per core of the batch-reduce kernel of `dtype` that accumulates
// into C (every round after the first), on the blocks a large GEMM of that
// dtype uses, with its operands in L2, every one of `threads` threads running
// it at once: LIBXSMM's for fp32 and fp64, for bf16 the one plans run (on AMX
// tiles where the CPU has them and SFC_AMX is not 0, else LIBXSMM's). The
// model's gamma is fp32's (predictor/calibration.hpp). Each thread times
// itself with its own CPU clock, best of `repetitions`, so time spent
// descheduled on a busy machine does not count. Takes about 0.1 s per
// repetition (fp32). Throws sfc::Error when there is no kernel for this CPU.
double kernel_gflops_per_core(int threads, int repetitions = 3, DType dtype = DType::f32);

}  // namespace sfc
