// sfc::gemm: C = A * B in one call, with the (K_layers, k_block_factor) that
// the ConfigService (libsfcconf's engine) answers for the shape, planned once
// per shape and reused.
//
//   sfc::gemm(sfc::Layout::row_major, {m, n, k}, sfc::DType::f32, a, lda, b, ldb, c, ldc);
//
// The free function reads its tuning data from the file named by the
// environment variable SFC_TUNING (a tuning database or exported table of
// this machine), opened on the first call; without it every shape gets
// the model or default tier. An AutoGemm object names its file explicitly.
//
// Plans (block sizes, curve map, kernels, scratch copies of C, packing
// buffers) are kept per (shape, dtype, threads, layout) and reused; callers on
// several threads each get a plan of their own. At most 16 idle plans are
// kept, the least recently used dropped first.
//
// Every call that runs is counted in the shape record when one is active
// (SFC_RECORD, sfc/shape_recorder.hpp), with its transposes. SFC_VERBOSE=1
// (read once per process) prints one line per call on stderr: dtype, layout,
// transposes, shape, threads, the tier and distance of the answer, the
// configuration the plan runs, whether the plan was new, and the time of the
// GEMM in microseconds.
#pragma once
#include <cstdint>
#include <memory>

#include "sfc/gemm.hpp"
#include "sfc/predictor.hpp"

namespace sfc {

class AutoGemm {
 public:
  // Opens `tuning_path` (ConfigService::open) for this machine, or for the
  // platform hash `platform`; nullptr: no file. Throws sfc::Error when the
  // file cannot be used (the message says why).
  explicit AutoGemm(const char* tuning_path = nullptr, const char* platform = nullptr);
  ~AutoGemm();
  AutoGemm(const AutoGemm&) = delete;
  AutoGemm& operator=(const AutoGemm&) = delete;

  // C = A * B (C overwritten) as GemmPlan::gemm; threads 0: omp_get_max_threads().
  // Thread-safe. Throws sfc::Error for bad sizes or an unsupported dtype.
  void gemm(Layout layout, const GemmShape& shape, DType dtype, const void* a, std::int64_t lda,
            const void* b, std::int64_t ldb, void* c, std::int64_t ldc, int threads = 0);

  // BLAS's xGEMM (C = alpha op(A) op(B) + beta C, see GemmPlan::gemm) with
  // the plan of the shape in `layout`. Thread-safe.
  void gemm(Layout layout, Transpose trans_a, Transpose trans_b, const GemmShape& shape, DType dtype,
            double alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, double beta,
            void* c, std::int64_t ldc, int threads = 0);

  // What gemm() runs a shape with: the ConfigService's answer, as libsfcconf's.
  Answer configuration(const GemmShape& shape, DType dtype, int threads = 0,
                       Layout layout = Layout::blocked) const;

  // Idle plans held for reuse.
  std::size_t cached_plans() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process-wide AutoGemm over $SFC_TUNING, opened on first use. Throws
// sfc::Error (a SourceError for the file) on every call when SFC_TUNING names
// a file that cannot be used.
AutoGemm& process_gemm();

// process_gemm().gemm(...).
void gemm(Layout layout, const GemmShape& shape, DType dtype, const void* a, std::int64_t lda, const void* b,
          std::int64_t ldb, void* c, std::int64_t ldc, int threads = 0);

}  // namespace sfc
