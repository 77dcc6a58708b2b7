// libsfcblas: a drop-in for the GEMMs of a BLAS. It exports cblas_sgemm,
// cblas_dgemm, sgemm_ and dgemm_, the C API of sfc_gemm.h (so that one engine
// serves a process that preloads this library and calls that API too), and
// sfc_blas_routing(); with LD_PRELOAD (or linked ahead of the BLAS) a
// program's GEMMs run on SFC-CA or on the real BLAS, whichever is faster for
// their shape: the first calls of each shape are timed on both (a race), the
// rest run on the winner. Calls below SFC_BLAS_MIN_FLOPS, thin ones (below
// SFC_BLAS_MIN_DIM) and every call in a forked child go to the real BLAS;
// every other BLAS routine reaches it anyway: the one SFC_BLAS_FALLBACK names,
// else the next library that defines the symbol (dlsym RTLD_NEXT), else the
// system's libcblas.so.3, libblas.so.3 or libopenblas.so.0 (as loaded by the
// program, or loaded here). SFC_BLAS_ROUTE=sfc skips the race (every call
// above the thresholds on SFC-CA; the default under SFC_TUNE=online and
// SFC_RECORD, which need every call). SFC_BLAS_VERBOSE=1 prints at exit how many calls and
// flops went each way and why; SFC_VERBOSE=1 prints a line per call (the
// SFC-CA ones from sfc::gemm's AutoGemm, the real BLAS's here, with the
// reason). Bad arguments are reported as BLAS's xerbla does (the parameter's
// number), and the call returns.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include "sfc/settings.hpp"
#include "sfc/threads.hpp"
#include "sfc_blas.h"
#include "sfc_gemm.h"

namespace {

// Below this many flops a GEMM goes to the fallback BLAS: the cost of SFC-CA's
// plan lookup, thread team and packing is not repaid (docs/blas.md has the
// measurement behind the default).
constexpr double kDefaultMinFlops = 2.0 * 128 * 128 * 128;
// A thin GEMM goes to the fallback BLAS whatever its flops: K below this, or
// the output's rows of a row-major call (M; N of a column-major one). 0: none
// does (the race decides such shapes like any other).
constexpr double kDefaultMinDimension = 0;

// A number >= 0 from the environment, or `otherwise` (the default the settings table names).
double environment_number(const char* name, double otherwise) {
  return sfc::setting_number(name, 0, std::numeric_limits<double>::max()).value_or(otherwise);
}

double min_flops() {
  static const double value = environment_number("SFC_BLAS_MIN_FLOPS", kDefaultMinFlops);
  return value;
}

double min_dimension() {
  static const double value = environment_number("SFC_BLAS_MIN_DIM", kDefaultMinDimension);
  return value;
}

// SFC_BLAS_ROUTE: race (time both, run the faster) or sfc (SFC-CA above the
// thresholds). Online tuning and shape recording need every call, so they
// default to sfc.
bool racing() {
  static const bool value = [] {
    if (const auto route = sfc::setting_choice("SFC_BLAS_ROUTE", {"race", "sfc"})) return *route == "race";
    const char* tune = sfc::setting_value("SFC_TUNE");  // its own reader warns about a bad value
    return !(tune && !std::strcmp(tune, "online")) && !sfc::setting_text("SFC_RECORD");
  }();
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

extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                            float*, int);

// The system BLAS the program has loaded, else one loaded here; null when none.
void* system_blas(std::string& name) {
  for (const int load : {RTLD_NOLOAD, 0})
    for (const char* candidate : {"libcblas.so.3", "libblas.so.3", "libopenblas.so.0"}) {
      void* handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL | load);
      const void* gemm = handle ? dlsym(handle, "cblas_sgemm") : nullptr;
      if (gemm && gemm != reinterpret_cast<const void*>(&cblas_sgemm)) {
        name = candidate;
        return handle;
      }
    }
  return nullptr;
}

const Fallback& fallback() {
  // Never destroyed: the exit report (registered earlier, so run later than
  // a static's destructor would be) still reads its name.
  static const Fallback& found = *new Fallback([] {
    Fallback f;
    void* handle = RTLD_NEXT;
    if (const auto library = sfc::setting_text("SFC_BLAS_FALLBACK")) {
      handle = dlopen(library->c_str(), RTLD_NOW | RTLD_LOCAL);
      const void* gemm = handle ? dlsym(handle, "cblas_sgemm") : nullptr;
      if (!handle) {
        std::fprintf(stderr, "sfc-blas: SFC_BLAS_FALLBACK: %s; using the system BLAS\n", dlerror());
      } else if (gemm == reinterpret_cast<const void*>(&cblas_sgemm)) {
        // This library itself (by another name, or already loaded): calling it would recurse forever.
        std::fprintf(stderr,
                     "sfc-blas: SFC_BLAS_FALLBACK=%s is this drop-in, not a BLAS; using the system BLAS\n",
                     library->c_str());
      } else {
        f.name = *library;
      }
      if (f.name != *library) handle = system_blas(f.name);
      if (!handle) return f;
    } else if (!dlsym(RTLD_NEXT, "cblas_sgemm")) {
      // A program that loads its BLAS privately (Python's extension modules
      // are dlopen()ed RTLD_LOCAL) leaves nothing after us to find: take the
      // system BLAS it has loaded, or else load it.
      handle = system_blas(f.name);
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

// Why a call went where it did.
enum class Reason {
  race_sfc,
  race_blas,
  racing,
  sfc_route,
  below_min_flops,
  thin,
  forked_child,
  sfc_failed,
  count
};
constexpr const char* kReasonNames[] = {"race_won",        "race_lost", "racing",       "route_sfc",
                                        "below_min_flops", "thin",      "forked_child", "sfc_failed"};

// Calls and flops each way, and calls by reason, for SFC_BLAS_VERBOSE and sfc_blas_routing().
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
std::atomic<long long> by_reason[int(Reason::count)];

std::string routing_json() {
  char text[1024];
  int used = std::snprintf(
      text, sizeof text,
      "{\"active\":true,\"fallback\":\"%s\",\"route\":\"%s\",\"sfc_calls\":%lld,\"sfc_gflop\":%.6g,"
      "\"fallback_calls\":%lld,\"fallback_gflop\":%.6g,\"min_flops\":%.0f,\"min_dim\":%.0f,"
      "\"reasons\":{",
      fallback().name.c_str(), racing() ? "race" : "sfc", to_sfc.calls.load(), to_sfc.flops.load() * 1e-9,
      to_fallback.calls.load(), to_fallback.flops.load() * 1e-9, min_flops(), min_dimension());
  for (int r = 0; r < int(Reason::count) && used < int(sizeof text); ++r)
    used += std::snprintf(text + used, sizeof text - used, "%s\"%s\":%lld", r ? "," : "", kReasonNames[r],
                          by_reason[r].load());
  if (used < int(sizeof text)) std::snprintf(text + used, sizeof text - used, "}}");
  return text;
}

void report() {
  std::fprintf(stderr,
               "sfc-blas: %lld GEMM calls (%.3g GFLOP) ran on SFC-CA, %lld (%.3g GFLOP) on %s "
               "(SFC_BLAS_MIN_FLOPS %.0f, SFC_BLAS_MIN_DIM %.0f)\n",
               to_sfc.calls.load(), to_sfc.flops.load() * 1e-9, to_fallback.calls.load(),
               to_fallback.flops.load() * 1e-9, fallback().name.c_str(), min_flops(), min_dimension());
  std::fprintf(stderr, "sfc-blas: routing %s\n", routing_json().c_str());
}

[[gnu::constructor]] void on_load() {
  if (sfc::setting_flag("SFC_BLAS_VERBOSE")) std::atexit(report);
  // OpenBLAS's workers spin for about 2^28 cycles after each call; between
  // SFC-CA's calls they take the cores from its team (and its idle team from
  // them). A short spin, for an OpenBLAS loaded after this library (Python's
  // numpy and PyTorch), unless the user chose one: docs/blas.md, "Threads".
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
}

// SFC_VERBOSE, read once per process (the SFC-CA calls print their own line
// from AutoGemm, which reads the same variable).
bool verbose() {
  static const bool value = sfc::setting_flag("SFC_VERBOSE");
  return value;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The race of one call signature: the first call builds SFC-CA's plan
// (untimed), then the real BLAS runs kRuns timed calls in a row and SFC-CA
// kRuns; from then on the faster minimum takes every call. In a row, not in
// turn: after SFC-CA's call its OpenMP workers spin for milliseconds (libgomp's
// GOMP_SPINCOUNT), so a BLAS call right after one shares the cores with them;
// a row's later calls run clear of that, and the minimum keeps them.
class Races {
 public:
  static constexpr int kRuns = 3;
  struct Key {
    char routine;  // 's', 'd', 'S', 'D': cblas_ or Fortran, single or double
    bool row_major;
    int ta, tb, m, n, k, threads;
    bool operator==(const Key&) const = default;
  };
  enum class Next { sfc_untimed, sfc, blas };
  struct Decision {
    bool sfc;
    bool decided;
    bool timed;
  };

  Decision next(const Key& key) {
    const std::lock_guard lock(mutex_);
    Entry& e = entries_[key];
    if (e.decided) return {e.sfc_wins, true, false};
    if (e.calls++ == 0) return {true, false, false};
    return {e.blas_runs >= kRuns, false, true};  // the real BLAS's row, then SFC-CA's
  }

  void report(const Key& key, bool sfc, double seconds) {
    const std::lock_guard lock(mutex_);
    Entry& e = entries_[key];
    if (e.decided) return;
    (sfc ? e.sfc_best : e.blas_best) = std::min(sfc ? e.sfc_best : e.blas_best, seconds);
    ++(sfc ? e.sfc_runs : e.blas_runs);
    if (e.sfc_runs >= kRuns && e.blas_runs >= kRuns) {
      e.decided = true;
      e.sfc_wins = e.sfc_best < e.blas_best;
    }
  }

 private:
  struct Entry {
    int calls = 0, sfc_runs = 0, blas_runs = 0;
    double sfc_best = 1e300, blas_best = 1e300;
    bool decided = false, sfc_wins = false;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t h = std::size_t(k.routine) * 31 + k.row_major;
      for (int v : {k.ta, k.tb, k.m, k.n, k.k, k.threads})
        h = (h ^ std::size_t(unsigned(v))) * 0x9e3779b97f4a7c15ull;
      return h;
    }
  };
  std::mutex mutex_;  // never taken in a forked child: every call there goes to the real BLAS
  std::unordered_map<Key, Entry, Hash> entries_;
};

Races& races() {
  static Races& r = *new Races;  // never destroyed: calls may come from threads still running at exit
  return r;
}

// The fallback's call, timed and printed when SFC_VERBOSE asks for it.
template <class Next>
void run_fallback(const char* routine, Reason why, int m, int n, int k, Next&& next) {
  if (!verbose()) return next();
  const auto start = std::chrono::steady_clock::now();
  next();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "sfc_verbose,blas_fallback,routine=%s,shape=%dx%dx%d,to=%s,reason=%s,time_us=%.1f\n",
               routine, m, n, k, fallback().name.c_str(), kReasonNames[int(why)], us);
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

// One GEMM: the real BLAS for a small, thin or forked-child call, else the
// race's route for its signature (or SFC-CA when not racing); a call SFC-CA
// cannot run for another reason than its arguments (no usable tuning file, no
// memory) also goes to the fallback. `first_parameter` maps sfc_gemm's
// numbering to the caller's (0 for cblas_, -1 for the Fortran entry, which has
// no order argument).
template <class Sfc, class Next>
void route(const char* routine, Races::Key key, int first_parameter, sfc_gemm_status arguments, Sfc&& sfc,
           Next&& next, bool has_next) {
  // Refused here whichever way the call would go, so a bad call reads the same every time.
  if (arguments != SFC_GEMM_OK) {
    xerbla(routine, sfc_gemm_bad_parameter() + first_parameter, sfc_gemm_last_error());
    return;
  }
  const int m = key.m, n = key.n, k = key.k;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  auto to_blas = [&](Reason why) {
    run_fallback(routine, why, m, n, k, next);
    to_fallback.add(flops);
    by_reason[int(why)].fetch_add(1, std::memory_order_relaxed);
  };
  if (has_next) {
    if (sfc::in_forked_child()) return to_blas(Reason::forked_child);
    if (flops < min_flops()) return to_blas(Reason::below_min_flops);
    if (std::min(key.row_major ? m : n, k) < min_dimension()) return to_blas(Reason::thin);
  }
  const bool race = has_next && racing() && m > 0 && n > 0 && k > 0;
  Races::Decision decision{true, false, false};
  if (race) {
    key.threads = sfc::default_threads();
    decision = races().next(key);
    if (!decision.sfc) {
      const double start = decision.timed ? now_seconds() : 0;
      to_blas(decision.decided ? Reason::race_blas : Reason::racing);
      if (decision.timed) races().report(key, false, now_seconds() - start);
      return;
    }
  }
  const double start = decision.timed ? now_seconds() : 0;
  const sfc_gemm_status status = sfc();
  if (status == SFC_GEMM_OK) {
    if (decision.timed) races().report(key, true, now_seconds() - start);
    to_sfc.add(flops);
    by_reason[int(!race              ? Reason::sfc_route
                  : decision.decided ? Reason::race_sfc
                                     : Reason::racing)]
        .fetch_add(1, std::memory_order_relaxed);
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
  if (has_next) to_blas(Reason::sfc_failed);
}

}  // namespace

extern "C" {

[[gnu::visibility("default")]] void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                                                const float* a, int lda, const float* b, int ldb, float beta,
                                                float* c, int ldc) {
  const Fallback& f = fallback();
  route(
      "cblas_sgemm", {'s', order == SFC_ROW_MAJOR, ta, tb, m, n, k, 0}, 0,
      sfc_gemm_check_arguments(sfc_gemm_order(order), sfc_gemm_transpose(ta), sfc_gemm_transpose(tb), m, n, k,
                               a, lda, b, ldb, c, ldc, alpha == 0),
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
      "cblas_dgemm", {'d', order == SFC_ROW_MAJOR, ta, tb, m, n, k, 0}, 0,
      sfc_gemm_check_arguments(sfc_gemm_order(order), sfc_gemm_transpose(ta), sfc_gemm_transpose(tb), m, n, k,
                               a, lda, b, ldb, c, ldc, alpha == 0),
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
      "SGEMM", {'S', false, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, 0}, -1,
      sfc_gemm_check_arguments(SFC_COL_MAJOR, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, a, *lda, b,
                               *ldb, c, *ldc, *alpha == 0),
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
      "DGEMM", {'D', false, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, 0}, -1,
      sfc_gemm_check_arguments(SFC_COL_MAJOR, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, a, *lda, b,
                               *ldb, c, *ldc, *alpha == 0),
      [&] {
        return sfc_dgemm(SFC_COL_MAJOR, transpose_of(*ta), transpose_of(*tb), *m, *n, *k, *alpha, a, *lda, b,
                         *ldb, *beta, c, *ldc);
      },
      [&] { f.dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); }, f.dgemm != nullptr);
}

// Where this process's GEMMs went, as a JSON object (sfc_blas.h): for tools
// and the Python module's sfctune.status(). Valid until the calling thread's
// next call.
[[gnu::visibility("default")]] const char* sfc_blas_routing(void) {
  thread_local std::string text;
  text = routing_json();
  return text.c_str();
}

}  // extern "C"
