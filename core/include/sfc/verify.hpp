// Checking the engine against an fp64 reference, with an error bound that
// follows from the inputs rather than a guessed tolerance.
#pragma once
#include <cstddef>
#include <cstdint>

#include "sfc/gemm.hpp"

namespace sfc {

// Fills `count` elements of `dtype` with deterministic uniform values in
// [-1, 1) (bf16: rounded-to-nearest-even bits); parallel on `threads` threads
// (0: default_threads()), the same result on any thread count.
void fill_uniform(void* data, std::size_t count, DType dtype, std::uint64_t seed, int threads = 0);

struct CheckResult {
  double rel_error;  // ||C - C_ref||_F / ||C_ref||_F
  // gamma_K * || |A| |B| ||_F / ||C_ref||_F with gamma_K = K u / (1 - K u), u the
  // unit roundoff of the accumulation type: the classical worst-case bound for
  // any order of summing K products (so it covers every K_layers and
  // k_block_factor, and LIBXSMM's FMAs only do better).
  double bound;
};

// Runs `plan` on random plain inputs in `layout` (blocked: packed, executed,
// unpacked through the plan's public helpers) and compares with an fp64
// reference computed from the same (dtype-rounded) inputs.
CheckResult check_against_reference(GemmPlan& plan, Layout layout, std::uint64_t seed = 7);

}  // namespace sfc
