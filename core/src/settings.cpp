#include "sfc/settings.hpp"

#include <cstdio>
#include <cstdlib>

namespace sfc {
namespace {

// Constant-initialized: libsfcblas reads it from a load-time constructor.
constexpr SettingInfo kSettings[] = {
    // core/
    {"SFC_AMX", "AMX tiles for bf16 where the CPU has them",
     "0 (off) or 1 (on, the default); else named, on"},
    {"OMP_NUM_THREADS", "the team size (checked against the CPUs this process may use)",
     "libgomp's count or list of counts"},
    {"HWLOC_XMLFILE", "hwloc's topology file instead of this machine's", "a topology file (checked)"},
    // db/
    {"SFC_FAULT", "fault injection for the crash-safety tests", "the spec db/src/fault_injection.cpp parses"},
    // timing/
    {"SFC_COLD_BYTES", "the cache-flush footprint of cold timings",
     "bytes, up to half the memory; else named, default"},
    // predictor/
    {"SFC_TUNING", "the tuning table or database sfc::gemm, libsfcgemm and libsfcblas answer from", "a path"},
    {"SFC_PLATFORM", "whose tuned shapes to answer from",
     "a platform choice as --platform takes it; else an error"},
    {"SFC_RECORD", "record the shapes called into this file", "a path; else named, not recording"},
    // runtime/
    {"SFC_VERBOSE", "info lines and each call's answer on stderr",
     "unset, empty or 0: off; anything else: on"},
    {"SFC_TUNE", "online tuning of the caller's own GEMMs", "online; else named, not tuning"},
    {"SFC_TUNE_DB", "the database online tuning writes", "a path (default sfc-tune.db)"},
    {"SFC_TUNE_BUDGET_MS", "online tuning's time budget per shape",
     "milliseconds > 0; else named, not tuning"},
    // blas/
    {"SFC_BLAS_MIN_FLOPS", "the drop-in's smallest GEMM for SFC-CA (flops)",
     "a number >= 0; else named, default"},
    {"SFC_BLAS_MIN_DIM", "the drop-in's smallest dimension for SFC-CA", "a number >= 0; else named, default"},
    {"SFC_BLAS_ROUTE", "the drop-in's routing", "race or sfc; else named, race"},
    {"SFC_BLAS_FALLBACK", "the real BLAS the drop-in falls back to",
     "a library path (default: the next one loaded)"},
    {"SFC_BLAS_VERBOSE", "the drop-in's routing report at exit", "unset, empty or 0: off; anything else: on"},
    // bench/
    {"SFC_OPENBLAS_LIBRARY", "the OpenBLAS sfc-tune bench loads", "a library path"},
    {"SFC_BLIS_LIBRARY", "the BLIS sfc-tune bench loads", "a library path"},
    {"SFC_ONEDNN_LIBRARY", "the oneDNN sfc-tune bench loads", "a library path"},
    // cli/
    {"SFC_LOG_LEVEL", "sfc-tune's log level",
     "trace, debug, info, warning, error, critical or off; else an error"},
    {"NO_COLOR", "no colour in sfc-tune's log (no-color.org)", "any value"},
};

}  // namespace

std::span<const SettingInfo> settings() noexcept { return kSettings; }

const char* setting_value(std::string_view name) noexcept {
  for (const SettingInfo& setting : kSettings)
    if (name == setting.name) return std::getenv(setting.name);
  std::fprintf(stderr, "sfc-tune: bug: the environment variable %.*s is not in core/src/settings.cpp\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

}  // namespace sfc
