// Private to bench/: one factory per peer library (peer_<name>.cpp) and the
// CBLAS entry points that OpenBLAS and BLIS share.
#pragma once
#include <cstdint>
#include <memory>

#include "sfc/gemm_peer.hpp"
#include "shared_library.hpp"

namespace sfc::bench_detail {

// Each factory looks up its symbols and throws PeerUnavailable if the library
// is not the build the peer needs.
std::unique_ptr<GemmPeer> make_openblas_peer(SharedLibrary library);
std::unique_ptr<GemmPeer> make_blis_peer(SharedLibrary library);
std::unique_ptr<GemmPeer> make_onednn_peer(SharedLibrary library);

// cblas_sgemm / cblas_dgemm with 32-bit integers (the LP64 interface both
// Debian's OpenBLAS and BLIS export), in either order, with op(A), op(B),
// alpha and beta as GemmPeer::gemm gives them.
class CblasGemm {
 public:
  explicit CblasGemm(const SharedLibrary& library);
  bool supports(DType dtype) const { return dtype == DType::f32 || dtype == DType::f64; }
  void gemm(std::string_view peer, DType dtype, Layout layout, const GemmArguments& call,
            const GemmShape& shape, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c,
            std::int64_t ldc) const;

 private:
  // CBLAS_ORDER and CBLAS_TRANSPOSE are plain ints in the ABI.
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                         float*, int);
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                         double*, int);
  Sgemm sgemm_;
  Dgemm dgemm_;
};

// A peer called through CBLAS (OpenBLAS, BLIS): the library, kept loaded for
// as long as the peer lives, and its CBLAS entry points.
class CblasPeer : public GemmPeer {
 public:
  explicit CblasPeer(SharedLibrary library) : library_(std::move(library)), cblas_(library_) {}
  bool supports(DType dtype) const override { return cblas_.supports(dtype); }
  void gemm(DType dtype, Layout layout, const GemmArguments& call, const GemmShape& shape, const void* a,
            std::int64_t lda, const void* b, std::int64_t ldb, void* c, std::int64_t ldc) const override {
    cblas_.gemm(name(), dtype, layout, call, shape, a, lda, b, ldb, c, ldc);
  }

 protected:
  SharedLibrary library_;

 private:
  CblasGemm cblas_;
};

// Throws sfc::Error naming the peer when it cannot run `dtype`.
void require_dtype(const GemmPeer& peer, DType dtype);
// Throws sfc::Error naming the peer for Layout::blocked (peers take plain matrices).
void require_plain(std::string_view peer, Layout layout);
// BLAS's transpose character for op(X): 'N' or 'T'.
inline char blas_char(Transpose t) { return t == Transpose::none ? 'N' : 'T'; }

}  // namespace sfc::bench_detail
