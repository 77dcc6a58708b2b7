#include <limits>
#include <string>

#include "peers.hpp"

namespace sfc::bench_detail {
namespace {

// Values fixed by the CBLAS standard (cblas.h).
constexpr int kCblasRowMajor = 101, kCblasColMajor = 102;
constexpr int kCblasNoTrans = 111, kCblasTrans = 112;

int cblas_transpose(Transpose t) { return t == Transpose::none ? kCblasNoTrans : kCblasTrans; }

int to_blas_int(std::string_view peer, std::int64_t value) {
  if (value > std::numeric_limits<int>::max())
    throw Error(std::string(peer) + " takes 32-bit sizes; " + std::to_string(value) + " is too large");
  return static_cast<int>(value);
}

}  // namespace

CblasGemm::CblasGemm(const SharedLibrary& library)
    : sgemm_(library.require<Sgemm>("cblas_sgemm")), dgemm_(library.require<Dgemm>("cblas_dgemm")) {}

void CblasGemm::gemm(std::string_view peer, DType dtype, Layout layout, const GemmArguments& call,
                     const GemmShape& shape, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                     void* c, std::int64_t ldc) const {
  require_plain(peer, layout);
  const int order = layout == Layout::row_major ? kCblasRowMajor : kCblasColMajor;
  const int ta = cblas_transpose(call.trans_a), tb = cblas_transpose(call.trans_b);
  const int m = to_blas_int(peer, shape.m), n = to_blas_int(peer, shape.n), k = to_blas_int(peer, shape.k);
  const int ia = to_blas_int(peer, lda), ib = to_blas_int(peer, ldb), ic = to_blas_int(peer, ldc);
  switch (dtype) {
    case DType::f32:
      sgemm_(order, ta, tb, m, n, k, float(call.alpha), static_cast<const float*>(a), ia,
             static_cast<const float*>(b), ib, float(call.beta), static_cast<float*>(c), ic);
      return;
    case DType::f64:
      dgemm_(order, ta, tb, m, n, k, call.alpha, static_cast<const double*>(a), ia,
             static_cast<const double*>(b), ib, call.beta, static_cast<double*>(c), ic);
      return;
    case DType::bf16: break;
  }
  throw Error(std::string(peer) + " has no " + std::string(to_string(dtype)) + " GEMM");
}

void require_dtype(const GemmPeer& peer, DType dtype) {
  if (!peer.supports(dtype))
    throw Error(std::string(peer.name()) + " has no " + std::string(to_string(dtype)) + " GEMM");
}

void require_plain(std::string_view peer, Layout layout) {
  if (layout == Layout::blocked)
    throw Error(std::string(peer) + " takes plain row- or column-major matrices, not the blocked layout");
}

}  // namespace sfc::bench_detail
