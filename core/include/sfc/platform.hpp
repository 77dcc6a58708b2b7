// Platform: what a tuning result is valid for. Two machines with the same
// fingerprint are expected to share winners; the hash keys every stored result.
#pragma once
#include <cstddef>
#include <string>

namespace sfc {

struct Platform {
  std::string cpu_model;        // /proc/cpuinfo "model name"
  int cores = 0;                // online logical CPUs
  int threads = 0;              // threads the GEMM runs with
  std::size_t l1d_bytes = 0;    // per core
  std::size_t l2_bytes = 0;     // per core
  std::size_t l3_bytes = 0;     // as the OS reports it
  std::string isa;              // the ISA LIBXSMM generates code for ("hsw", "cpx", ...)
  std::string libxsmm_version;
  std::string compiler;

  // 16 hex digits (FNV-1a 64 over the fields above, in this order); stable across runs.
  std::string hash() const;
};

// Reads the running machine. threads <= 0 means omp_get_max_threads().
Platform detect_platform(int threads = 0);

}  // namespace sfc
