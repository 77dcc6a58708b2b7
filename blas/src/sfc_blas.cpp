// libsfcblas: a drop-in for the GEMMs of a BLAS. It exports cblas_sgemm,
// cblas_dgemm, sgemm_ and dgemm_ and nothing else, so that with LD_PRELOAD (or
// linked ahead of the BLAS) a program's GEMMs of at least SFC_BLAS_MIN_FLOPS
// run on SFC-CA (through the C API of sfc_gemm.h, tuned by SFC_TUNING) and
// every other call -- smaller GEMMs, every other BLAS routine -- reaches the
// real BLAS: the one SFC_BLAS_FALLBACK names, else the next library that
// defines the symbol (dlsym RTLD_NEXT), else the system's libcblas.so.3,
// libblas.so.3 or libopenblas.so.0 (as loaded by the program, or loaded here). SFC_BLAS_VERBOSE=1 prints at
// exit how many calls and flops went each way; SFC_VERBOSE=1 prints a line per
// call (the SFC-CA ones from sfc::gemm's AutoGemm, the fallback's here). Bad arguments are reported as BLAS's
// xerbla does (the parameter's number), and the call returns.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sfc_gemm.h"

namespace {

// Below this many flops a GEMM goes to the fallback BLAS: the cost of SFC-CA's
// plan lookup, thread team and packing is not repaid (docs/blas.md has the
// measurement behind the default).
constexpr double kDefaultMinFlops = 2.0 * 128 * 128 * 128;
// A thin GEMM goes to the fallback BLAS whatever its flops: K below this, or
// the output's rows of a row-major call (M; N of a column-major one). 0: none
// does. The engine once lost to OpenBLAS there (it packed the whole of an
// operand it then used once, and wrote C in 64 x 64 tiles); since it packs
// such panels inside its loop and makes tiles tall, SFC-CA beats OpenBLAS on
// every shape of data/grids/skinny.shapes with a K or M of 1-64 (1.4-2.9x;
// docs/blas.md).
constexpr double kDefaultMinDimension = 0;

// A number >= 0 from the environment, or `otherwise` (with a warning when the
// variable is set to something else).
double environment_number(const char* name, double otherwise) {
  const char* text = std::getenv(name);
  if (!text || !*text) return otherwise;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end || !(v >= 0)) {
    std::fprintf(stderr, "sfc-blas: %s='%s' is not a number >= 0; using %.0f\n", name, text, otherwise);
    return otherwise;
  }
  return v;
}

double min_flops() {
  static const double value = environment_number("SFC_BLAS_MIN_FLOPS", kDefaultMinFlops);
  return value;
}

double min_dimension() {
  static const double value = environment_number("SFC_BLAS_MIN_DIM", kDefaultMinDimension);
  return value;
}

using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                            float*, int);
using CblasDgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int,
                            double, double*, int);
using FortranSgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                              const float*, const int*, const float*, const int*, const float*, float*,
                              const int*);
using FortranDgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const double*,
                              const double*, const int*, const double*, const int*, const double*, double*,
                              const int*);

// The real BLAS the small calls go to; null entries when there is none.
struct Fallback {
  CblasSgemm cblas_sgemm = nullptr;
  CblasDgemm cblas_dgemm = nullptr;
  FortranSgemm sgemm = nullptr;
  FortranDgemm dgemm = nullptr;
  std::string name = "the next BLAS in the process";
};

const Fallback& fallback() {
  // Never destroyed: the exit report (registered earlier, so run later than
  // a static's destructor would be) still reads its name.
  static const Fallback& found = *new Fallback([] {
    Fallback f;
    void* handle = RTLD_NEXT;
    if (const char* library = std::getenv("SFC_BLAS_FALLBACK"); library && *library) {
      handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        std::fprintf(stderr, "sfc-blas: SFC_BLAS_FALLBACK: %s; every GEMM runs on SFC-CA\n", dlerror());
        return f;
      }
      f.name = library;
    } else if (!dlsym(RTLD_NEXT, "cblas_sgemm")) {
      // A program that loads its BLAS privately (Python's extension modules
      // are dlopen()ed RTLD_LOCAL) leaves nothing after us to find: take the
      // system BLAS it has loaded, or else load it.
      // First one the program has loaded already, then one loaded here.
      for (const int load : {RTLD_NOLOAD, 0}) {
        for (const char* system_blas : {"libcblas.so.3", "libblas.so.3", "libopenblas.so.0"}) {
          handle = dlopen(system_blas, RTLD_NOW | RTLD_LOCAL | load);
          if (handle && dlsym(handle, "cblas_sgemm")) {
            f.name = system_blas;
            break;
          }
          handle = nullptr;
        }
        if (handle) break;
      }
      if (!handle) return f;
    }
    f.cblas_sgemm = reinterpret_cast<CblasSgemm>(dlsym(handle, "cblas_sgemm"));
    f.cblas_dgemm = reinterpret_cast<CblasDgemm>(dlsym(handle, "cblas_dgemm"));
    f.sgemm = reinterpret_cast<FortranSgemm>(dlsym(handle, "sgemm_"));
    f.dgemm = reinterpret_cast<FortranDgemm>(dlsym(handle, "dgemm_"));
    return f;
  }());
  return found;
}

// Calls and flops each way, for SFC_BLAS_VERBOSE.
struct Route {
  std::atomic<long long> calls{0};
  std::atomic<double> flops{0};
  void add(double f) {
    calls.fetch_add(1, std::memory_order_relaxed);
    double seen = flops.load(std::memory_order_relaxed);
    while (!flops.compare_exchange_weak(seen, seen + f, std::memory_order_relaxed)) {}
  }
};
Route to_sfc, to_fallback;

void report() {
  std::fprintf(stderr,
               "sfc-blas: %lld GEMM calls (%.3g GFLOP) ran on SFC-CA, %lld (%.3g GFLOP) on %s "
               "(SFC_BLAS_MIN_FLOPS %.0f, SFC_BLAS_MIN_DIM %.0f)\n",
               to_sfc.calls.load(), to_sfc.flops.load() * 1e-9, to_fallback.calls.load(),
               to_fallback.flops.load() * 1e-9, fallback().name.c_str(), min_flops(), min_dimension());
}

[[gnu::constructor]] void on_load() {
  if (const char* verbose = std::getenv("SFC_BLAS_VERBOSE"); verbose && *verbose && *verbose != '0')
    std::atexit(report);
}

// SFC_VERBOSE, read once per process (the SFC-CA calls print their own line
// from AutoGemm, which reads the same variable).
bool verbose() {
  static const bool value = [] {
    const char* text = std::getenv("SFC_VERBOSE");
    return text && *text && std::string(text) != "0";
  }();
  return value;
}

// The fallback's call, timed and printed when SFC_VERBOSE asks for it.
template <class Next>
void run_fallback(const char* routine, int m, int n, int k, Next&& next) {
  if (!verbose()) return next();
  const auto start = std::chrono::steady_clock::now();
  next();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "sfc_verbose,blas_fallback,routine=%s,shape=%dx%dx%d,to=%s,time_us=%.1f\n", routine, m,
               n, k, fallback().name.c_str(), us);
}

// xerbla's message, for the routine's own parameter numbering.
void xerbla(const char* routine, int parameter, const char* why) {
  std::fprintf(stderr, " ** On entry to %s parameter number %d had an illegal value (%s)\n", routine,
               parameter, why);
}

sfc_gemm_transpose transpose_of(char c) {
  switch (std::toupper(static_cast<unsigned char>(c))) {
    case 'N': return SFC_NO_TRANS;
    case 'T': return SFC_TRANS;
    case 'C': return SFC_CONJ_TRANS;
  }
  return static_cast<sfc_gemm_transpose>(0);  // refused below as a bad parameter
}

// One GEMM: SFC-CA when it is large enough in flops and not thin (see
// kDefaultMinDimension; or when there is no fallback), else
// the fallback; a call SFC-CA cannot run for another reason than its
// arguments (no usable tuning file, no memory) also goes to the fallback.
// `first_parameter` maps sfc_gemm's numbering to the caller's (0 for cblas_,
// -1 for the Fortran entry, which has no order argument).
template <class Sfc, class Next>
void route(const char* routine, int first_parameter, bool row_major, int m, int n, int k, Sfc&& sfc,
           Next&& next, bool has_next) {
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const bool small = flops < min_flops() || std::min(row_major ? m : n, k) < min_dimension();
  if (has_next && small && m >= 0 && n >= 0 && k >= 0) {
    run_fallback(routine, m, n, k, next);
    to_fallback.add(flops);
    return;
  }
  const sfc_gemm_status status = sfc();
  if (status == SFC_GEMM_OK) {
    to_sfc.add(flops);
    return;
  }
  if (status == SFC_GEMM_ERR_ARGUMENT) {
    xerbla(routine, sfc_gemm_bad_parameter() + first_parameter, sfc_gemm_last_error());
    return;
  }
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "sfc-blas: %s; such calls go to %s\n", sfc_gemm_last_error(),
                 fallback().name.c_str());
  if (has_next) {
    run_fallback(routine, m, n, k, next);
    to_fallback.add(flops);
  }
}

}  // namespace

extern "C" {

[[gnu::visibility("default")]] void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                                                const float* a, int lda, const float* b, int ldb, float beta,
                                                float* c, int ldc) {
  const Fallback& f = fallback();
  route(
      "cblas_sgemm", 0, order == SFC_ROW_MAJOR, m, n, k,
      [&] {
        return sfc_sgemm(sfc_gemm_order(order), sfc_gemm_transpose(ta), sfc_gemm_transpose(tb), m, n, k,
                         alpha, a, lda, b, ldb, beta, c, ldc);
      },
      [&] { f.cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); },
      f.cblas_sgemm != nullptr);
}

[[gnu::visibility("default")]] void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha,
                                                const double* a, int lda, const double* b, int ldb,
                                                double beta, double* c, int ldc) {
  const Fallback& f = fallback();
  route(
      "cblas_dgemm", 0, order == SFC_ROW_MAJOR, m, n, k,
      [&] {
        return sfc_dgemm(sfc_gemm_order(order), sfc_gemm_transpose(ta), sfc_gemm_transpose(tb), m, n, k,
                         alpha, a, lda, b, ldb, beta, c, ldc);
      },
      [&] { f.cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); },
      f.cblas_dgemm != nullptr);
}

// Fortran BLAS: column-major, every argument by reference (the hidden
// lengths of the two character arguments are not read).
[[gnu::visibility("default")]] void sgemm_(const char* ta, const char* tb, const int* m, const int* n,
                                           const int* k, const float* alpha, const float* a, const int* lda,
                                           const float* b, const int* ldb, const float* beta, float* c,
                                           const int* ldc) {
  const Fallback& f = fallback();
  route(
      "SGEMM", -1, false, *m, *n, *k,
      [&] {
        return sfc_sgemm(SFC_COL_MAJOR, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, *alpha, a, *lda, b,
                         *ldb, *beta, c, *ldc);
      },
      [&] { f.sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); }, f.sgemm != nullptr);
}

[[gnu::visibility("default")]] void dgemm_(const char* ta, const char* tb, const int* m, const int* n,
                                           const int* k, const double* alpha, const double* a, const int* lda,
                                           const double* b, const int* ldb, const double* beta, double* c,
                                           const int* ldc) {
  const Fallback& f = fallback();
  route(
      "DGEMM", -1, false, *m, *n, *k,
      [&] {
        return sfc_dgemm(SFC_COL_MAJOR, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, *alpha, a, *lda, b,
                         *ldb, *beta, c, *ldc);
      },
      [&] { f.dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); }, f.dgemm != nullptr);
}

}  // extern "C"
