// The platform fingerprint. Every field that changes which configuration wins
// (CPU, core count, threads, cache sizes, the ISA the kernels are generated
// for, the kernel library and compiler) goes into the hash; nothing that
// varies between runs on one machine (clock, load, time) does.
#include "sfc/platform.hpp"

#include <libxsmm.h>
#include <omp.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace sfc {
namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? std::string() : line.substr(begin);
  }
  return "unknown";
}

std::size_t cache_bytes(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::size_t>(v) : 0;
}

void mix(std::uint64_t& h, const std::string& field) {
  for (unsigned char ch : field) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  h ^= 0x1f;  // field separator, so ("ab","c") and ("a","bc") differ
  h *= 1099511628211ull;
}

}  // namespace

std::string Platform::hash() const {
  std::uint64_t h = 14695981039346656037ull;
  for (const std::string& field :
       {cpu_model, std::to_string(cores), std::to_string(threads), std::to_string(l1d_bytes),
        std::to_string(l2_bytes), std::to_string(l3_bytes), isa, libxsmm_version, compiler})
    mix(h, field);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

Platform detect_platform(int threads) {
  libxsmm_init();  // idempotent; makes the detected target ISA available
  Platform p;
  p.cpu_model = cpu_model_name();
  p.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  p.threads = threads > 0 ? threads : omp_get_max_threads();
  p.l1d_bytes = cache_bytes(_SC_LEVEL1_DCACHE_SIZE);
  p.l2_bytes = cache_bytes(_SC_LEVEL2_CACHE_SIZE);
  p.l3_bytes = cache_bytes(_SC_LEVEL3_CACHE_SIZE);
  p.isa = libxsmm_get_target_arch();
  p.libxsmm_version = LIBXSMM_VERSION;
#if defined(__clang__)
  p.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  p.compiler = "gcc " __VERSION__;
#else
  p.compiler = "unknown";
#endif
  return p;
}

}  // namespace sfc
