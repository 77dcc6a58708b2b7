// The roofline bound a GEMM shape can reach (paper, section III-B):
//   min(gamma * threads, beta * intensity),
// gamma the per-core compute ceiling (GFLOP/s, the BRGEMM kernel with data in
// cache), beta the memory bandwidth of all threads together (GB/s) and
// intensity = 2MNK / bytes of A, B and C each moved once.
#pragma once
#include <string>

#include "sfc/gemm.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

// Flops per FMA lane of `dtype` relative to fp32: f64 does half the flops per
// FMA instruction, bf16 (AVX512-BF16 dot products) twice.
double simd_rate(DType dtype);

// Flops per byte of A + B + C, each read or written once.
double arithmetic_intensity(const GemmShape& shape, DType dtype);

struct Roofline {
  double gflops_per_core = 0;  // gamma, for the benchmark's dtype
  double bandwidth_gbs = 0;    // beta
  int threads = 1;
  std::string source;  // where gamma and beta came from, for the report

  // From a calibration (calibrate() or a stored one), whose gamma is fp32's;
  // other dtypes scale it by their simd_rate.
  static Roofline from_calibration(const Calibration& calibration, DType dtype, int threads,
                                   std::string source);

  double bound_gflops(const GemmShape& shape, DType dtype) const;
};

}  // namespace sfc
