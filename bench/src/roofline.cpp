#include "sfc/roofline.hpp"

#include <algorithm>

namespace sfc {

double simd_rate(DType dtype) { return dtype == DType::f64 ? 0.5 : dtype == DType::bf16 ? 2.0 : 1.0; }

double arithmetic_intensity(const GemmShape& shape, DType dtype) {
  const double m = double(shape.m), n = double(shape.n), k = double(shape.k);
  const double bytes = (m * k + k * n) * double(input_size(dtype)) + m * n * double(output_size(dtype));
  return shape.flops() / bytes;
}

Roofline Roofline::from_calibration(const Calibration& calibration, DType dtype, int threads,
                                    std::string source) {
  return {calibration.gamma_gflops_per_core * simd_rate(dtype), calibration.beta_gbytes_per_s, threads,
          std::move(source)};
}

double Roofline::bound_gflops(const GemmShape& shape, DType dtype) const {
  return std::min(gflops_per_core * threads, bandwidth_gbs * arithmetic_intensity(shape, dtype));
}

}  // namespace sfc
