// oneDNN's BLAS-like entry points (dnnl_sgemm, dnnl_gemm_bf16bf16f32): row-major
// by definition, 64-bit sizes, threads from the OpenMP runtime it links.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "peers.hpp"

namespace sfc::bench_detail {
namespace {

// The parts of dnnl.h / dnnl_types.h (oneDNN 2.x and 3.x) used here; the
// header is not needed to build, so the binary builds without libdnnl-dev.
using DnnlDim = std::int64_t;  // dnnl_dim_t
using DnnlStatus = int;        // dnnl_status_t, dnnl_success == 0
struct DnnlVersion {           // dnnl_version_t
  int major, minor, patch;
  const char* hash;
  unsigned cpu_runtime, gpu_runtime;
};
using Sgemm = DnnlStatus (*)(char, char, DnnlDim, DnnlDim, DnnlDim, float, const float*, DnnlDim,
                             const float*, DnnlDim, float, float*, DnnlDim);
using GemmBf16 = DnnlStatus (*)(char, char, DnnlDim, DnnlDim, DnnlDim, float, const std::uint16_t*, DnnlDim,
                                const std::uint16_t*, DnnlDim, float, float*, DnnlDim);

class OneDnnPeer final : public GemmPeer {
 public:
  explicit OneDnnPeer(SharedLibrary library)
      : library_(std::move(library)),
        sgemm_(library_.require<Sgemm>("dnnl_sgemm")),
        gemm_bf16_(library_.find<GemmBf16>("dnnl_gemm_bf16bf16f32")),
        // Looked up through the library's own dependencies: this is the OpenMP
        // runtime oneDNN runs on, even if the binary carries another one.
        omp_set_num_threads_(library_.require<void (*)(int)>("omp_set_num_threads")) {
    const DnnlVersion* v = library_.require<const DnnlVersion* (*)()>("dnnl_version")();
    version_ = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    // oneDNN exports the bf16 entry everywhere but implements it only on
    // AVX-512 CPUs (dnnl_unimplemented on AVX2): ask it once, on one element.
    if (gemm_bf16_) {
      const std::uint16_t one = 0x3f80;  // 1.0 in bfloat16
      float out = 0;
      if (gemm_bf16_('N', 'N', 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &out, 1) != 0 || out != 1.0f)
        gemm_bf16_ = nullptr;
    }
  }

  std::string_view name() const override { return "onednn"; }
  std::string description() const override { return "oneDNN " + version_ + " (" + library_.path() + ")"; }
  bool supports(DType dtype) const override {
    return dtype == DType::f32 || (dtype == DType::bf16 && gemm_bf16_ != nullptr);
  }
  void set_threads(int threads) override { omp_set_num_threads_(threads); }
  // dnnl_sgemm is row-major only. A column-major C = op(A) op(B) is, in the
  // same memory, the row-major C^T = op(B)^T op(A)^T: B and A swapped, N and M
  // swapped, the transpose flags kept (each operand read row-major is its own
  // transpose).
  void gemm(DType dtype, Layout layout, const GemmArguments& call, const GemmShape& shape, const void* a,
            std::int64_t lda, const void* b, std::int64_t ldb, void* c, std::int64_t ldc) const override {
    require_dtype(*this, dtype);
    require_plain(name(), layout);
    const bool row = layout == Layout::row_major;
    const char first_trans = blas_char(row ? call.trans_a : call.trans_b);
    const char second_trans = blas_char(row ? call.trans_b : call.trans_a);
    const DnnlDim rows = row ? shape.m : shape.n, cols = row ? shape.n : shape.m;
    const void* first = row ? a : b;
    const void* second = row ? b : a;
    const DnnlDim ld_first = row ? lda : ldb, ld_second = row ? ldb : lda;
    const float alpha = float(call.alpha), beta = float(call.beta);
    const DnnlStatus status =
        dtype == DType::f32
            ? sgemm_(first_trans, second_trans, rows, cols, shape.k, alpha, static_cast<const float*>(first),
                     ld_first, static_cast<const float*>(second), ld_second, beta, static_cast<float*>(c),
                     ldc)
            : gemm_bf16_(first_trans, second_trans, rows, cols, shape.k, alpha,
                         static_cast<const std::uint16_t*>(first), ld_first,
                         static_cast<const std::uint16_t*>(second), ld_second, beta, static_cast<float*>(c),
                         ldc);
    if (status != 0)
      throw std::runtime_error("oneDNN GEMM failed with dnnl_status_t " + std::to_string(status));
  }

 private:
  SharedLibrary library_;
  Sgemm sgemm_;
  GemmBf16 gemm_bf16_;  // null where the build or the CPU has no bf16 GEMM
  void (*omp_set_num_threads_)(int);
  std::string version_;
};

}  // namespace

std::unique_ptr<GemmPeer> make_onednn_peer(SharedLibrary library) {
  return std::make_unique<OneDnnPeer>(std::move(library));
}

}  // namespace sfc::bench_detail
