// libsfcgemm's C API (sfc_gemm.h) over AutoGemm: BLAS argument checks with
// BLAS's parameter numbers, BLAS's quick returns, and C++ exceptions turned
// into status codes and a thread-local message at this boundary.
#include "sfc_gemm.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string>

#include "sfc/auto_gemm.hpp"
#include "sfc/error.hpp"
#include "sfc/tuning_source.hpp"

struct sfc_gemm_context {
  sfc::AutoGemm gemm;
};

namespace {

thread_local std::string last_error;
thread_local int last_parameter = 0;

sfc_gemm_status fail(sfc_gemm_status status, const std::string& message, int parameter = 0) noexcept {
  try {
    last_error = message;
  } catch (...) {
    last_error.clear();
  }
  last_parameter = parameter;
  return status;
}

// The first argument BLAS would reject, numbered as in sfc_sgemm's list, with
// its message; 0 when all are valid.
int bad_parameter(const char* name, int order, int ta, int tb, int m, int n, int k, const void* a, int lda,
                  const void* b, int ldb, const void* c, int ldc, bool alpha_zero, std::string& why) {
  const bool row = order == SFC_ROW_MAJOR;
  auto valid_trans = [](int t) { return t == SFC_NO_TRANS || t == SFC_TRANS || t == SFC_CONJ_TRANS; };
  auto say = [&](int position, const std::string& text) {
    why = std::string(name) + ": parameter " + std::to_string(position) + " " + text;
    return position;
  };
  if (order != SFC_ROW_MAJOR && order != SFC_COL_MAJOR)
    return say(1, "(order) is " + std::to_string(order) + ", not SFC_ROW_MAJOR (101) or SFC_COL_MAJOR (102)");
  if (!valid_trans(ta)) return say(2, "(trans_a) is " + std::to_string(ta) + ", not 111, 112 or 113");
  if (!valid_trans(tb)) return say(3, "(trans_b) is " + std::to_string(tb) + ", not 111, 112 or 113");
  if (m < 0) return say(4, "(m) is " + std::to_string(m) + ", must be >= 0");
  if (n < 0) return say(5, "(n) is " + std::to_string(n) + ", must be >= 0");
  if (k < 0) return say(6, "(k) is " + std::to_string(k) + ", must be >= 0");
  // Each matrix's stored columns (row-major) or rows (column-major) bound its ld.
  const bool a_trans = ta != SFC_NO_TRANS, b_trans = tb != SFC_NO_TRANS;
  const int min_lda = std::max(1, row != a_trans ? k : m);
  const int min_ldb = std::max(1, row != b_trans ? n : k);
  const int min_ldc = std::max(1, row ? n : m);
  auto too_small = [](int ld, int min) {
    return "is " + std::to_string(ld) + ", must be >= " + std::to_string(min);
  };
  if (lda < min_lda) return say(9, "(lda) " + too_small(lda, min_lda));
  if (ldb < min_ldb) return say(11, "(ldb) " + too_small(ldb, min_ldb));
  if (ldc < min_ldc) return say(14, "(ldc) " + too_small(ldc, min_ldc));
  const bool product = m > 0 && n > 0 && k > 0 && !alpha_zero;
  if (product && !a) return say(8, "(a) is NULL");
  if (product && !b) return say(10, "(b) is NULL");
  if (m > 0 && n > 0 && !c) return say(13, "(c) is NULL");
  return 0;
}

// C = beta * C on the caller's matrix (beta = 0 writes zeros, C unread).
template <class T>
void scale(bool row, int m, int n, T beta, T* c, int ldc) {
  const int lines = row ? m : n, length = row ? n : m;
  for (int l = 0; l < lines; ++l) {
    T* line = c + std::int64_t(l) * ldc;
    if (beta == T(0))
      std::fill(line, line + length, T(0));
    else if (beta != T(1))
      for (int i = 0; i < length; ++i) line[i] *= beta;
  }
}

// Runs `body` (which returns SFC_GEMM_OK) and turns what it throws into a
// status and this thread's message, prefixed by `prefix`: a tuning file's
// failure is SFC_GEMM_ERR_TUNING, another sfc::Error `engine_error` (with
// `parameter`, for an argument), no memory SFC_GEMM_ERR_ENGINE, anything else
// SFC_GEMM_ERR_INTERNAL.
template <class Body>
sfc_gemm_status guarded(const std::string& prefix, sfc_gemm_status engine_error, int parameter,
                        Body&& body) noexcept {
  try {
    return body();
  } catch (const sfc::SourceError& e) {
    return fail(SFC_GEMM_ERR_TUNING, prefix + e.what());
  } catch (const sfc::Error& e) {
    return fail(engine_error, prefix + e.what(), parameter);
  } catch (const std::bad_alloc&) {
    return fail(SFC_GEMM_ERR_ENGINE, prefix + "out of memory");
  } catch (const std::exception& e) {
    return fail(SFC_GEMM_ERR_INTERNAL, prefix + e.what());
  } catch (...) {
    return fail(SFC_GEMM_ERR_INTERNAL, prefix + "unknown exception");
  }
}

template <class T>
sfc_gemm_status gemm(const char* name, sfc_gemm_context* context, sfc_gemm_order order, sfc_gemm_transpose ta,
                     sfc_gemm_transpose tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
                     int ldb, T beta, T* c, int ldc) noexcept {
  std::string why;
  if (const int p = bad_parameter(name, order, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha == T(0), why))
    return fail(SFC_GEMM_ERR_ARGUMENT, why, p);
  last_parameter = 0;
  const bool row = order == SFC_ROW_MAJOR;
  if (m == 0 || n == 0) return SFC_GEMM_OK;
  if (k == 0 || alpha == T(0)) {
    scale(row, m, n, beta, c, ldc);
    return SFC_GEMM_OK;
  }
  return guarded(std::string(name) + ": ", SFC_GEMM_ERR_ENGINE, 0, [&] {
    sfc::AutoGemm& engine = context ? context->gemm : sfc::process_gemm();
    engine.gemm(row ? sfc::Layout::row_major : sfc::Layout::col_major,
                ta == SFC_NO_TRANS ? sfc::Transpose::none : sfc::Transpose::transpose,
                tb == SFC_NO_TRANS ? sfc::Transpose::none : sfc::Transpose::transpose, {m, n, k},
                sizeof(T) == 8 ? sfc::DType::f64 : sfc::DType::f32, double(alpha), a, lda, b, ldb,
                double(beta), c, ldc);
    return SFC_GEMM_OK;
  });
}

}  // namespace

extern "C" {

sfc_gemm_status sfc_gemm_open(const char* tuning_path, const char* platform, sfc_gemm_context** out) {
  if (!out) return fail(SFC_GEMM_ERR_ARGUMENT, "sfc_gemm_open: out is NULL", 3);
  *out = nullptr;
  // Only the platform choice (parameter 2) is checked here: any other sfc::Error names it.
  return guarded("", SFC_GEMM_ERR_ARGUMENT, 2, [&] {
    *out = new sfc_gemm_context{sfc::AutoGemm(tuning_path, platform)};
    return SFC_GEMM_OK;
  });
}

void sfc_gemm_close(sfc_gemm_context* context) { delete context; }

sfc_gemm_status sfc_sgemm(sfc_gemm_order order, sfc_gemm_transpose ta, sfc_gemm_transpose tb, int m, int n,
                          int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                          float* c, int ldc) {
  return gemm("sfc_sgemm", nullptr, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

sfc_gemm_status sfc_dgemm(sfc_gemm_order order, sfc_gemm_transpose ta, sfc_gemm_transpose tb, int m, int n,
                          int k, double alpha, const double* a, int lda, const double* b, int ldb,
                          double beta, double* c, int ldc) {
  return gemm("sfc_dgemm", nullptr, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

sfc_gemm_status sfc_sgemm_with(sfc_gemm_context* context, sfc_gemm_order order, sfc_gemm_transpose ta,
                               sfc_gemm_transpose tb, int m, int n, int k, float alpha, const float* a,
                               int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  return gemm("sfc_sgemm", context, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

sfc_gemm_status sfc_dgemm_with(sfc_gemm_context* context, sfc_gemm_order order, sfc_gemm_transpose ta,
                               sfc_gemm_transpose tb, int m, int n, int k, double alpha, const double* a,
                               int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  return gemm("sfc_dgemm", context, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

sfc_gemm_status sfc_gemm_check_arguments(sfc_gemm_order order, sfc_gemm_transpose ta, sfc_gemm_transpose tb,
                                         int m, int n, int k, const void* a, int lda, const void* b, int ldb,
                                         const void* c, int ldc, int alpha_zero) {
  std::string why;
  if (const int p =
          bad_parameter("sfc_gemm", order, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha_zero, why))
    return fail(SFC_GEMM_ERR_ARGUMENT, why, p);
  return SFC_GEMM_OK;
}

const char* sfc_gemm_last_error(void) { return last_error.c_str(); }

int sfc_gemm_bad_parameter(void) { return last_parameter; }

}  // extern "C"

// Shape recording (sfc_gemm_record_*): the same ShapeRecorder libsfcconf's
// sfcconf_record_* drive, here this library's own copy. Kept at the end of
// the file, its include with it, so that it stays apart from the GEMM entry
// points above.
#include "sfc/shape_recorder.hpp"

extern "C" {

sfc_gemm_status sfc_gemm_record_open(const char* path) {
  if (!path || !*path) return fail(SFC_GEMM_ERR_ARGUMENT, "sfc_gemm_record_open: path is NULL or empty", 1);
  // Not a shape record (RecordFormatError), or not creatable or readable: the tuning side's failure.
  return guarded("sfc_gemm_record_open: ", SFC_GEMM_ERR_TUNING, 0, [&] {
    sfc::ShapeRecorder::start(path);
    return SFC_GEMM_OK;
  });
}

sfc_gemm_status sfc_gemm_record_flush(void) {
  return guarded("sfc_gemm_record_flush: ", SFC_GEMM_ERR_TUNING, 0, [] {
    sfc::ShapeRecorder::flush_active();
    return SFC_GEMM_OK;
  });
}

sfc_gemm_status sfc_gemm_record_close(void) {
  return sfc::ShapeRecorder::stop() ? SFC_GEMM_OK
                                    : fail(SFC_GEMM_ERR_TUNING,
                                           "sfc_gemm_record_close: the last counts could not be written "
                                           "(the reason is on stderr)");
}

}  // extern "C"
