// The speed of the engine's own kernel: what the analytical model calls gamma
// (predictor/calibration.hpp), measured here because only the engine knows
// which kernel it dispatches and on which blocks.
#pragma once

namespace sfc {

// GFLOP/s per core of the fp32 batch-reduce kernel that accumulates into C
// (every round after the first), on the blocks a large fp32 GEMM uses, with
// its operands in L2, every one of `threads` threads running it at once. Each
// thread times itself with its own CPU clock, best of `repetitions`, so time
// spent descheduled on a busy machine does not count. Takes about 0.1 s per
// repetition. Throws sfc::Error when LIBXSMM has no kernel for this CPU.
double kernel_gflops_per_core(int threads, int repetitions = 3);

}  // namespace sfc
