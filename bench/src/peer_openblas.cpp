// OpenBLAS through its CBLAS interface.
#include <string>

#include "peers.hpp"

namespace sfc::bench_detail {
namespace {

class OpenBlasPeer final : public GemmPeer {
 public:
  explicit OpenBlasPeer(SharedLibrary library)
      : library_(std::move(library)),
        cblas_(library_),
        set_num_threads_(library_.require<void (*)(int)>("openblas_set_num_threads")),
        config_(library_.require<const char* (*)()>("openblas_get_config")()) {
    // The ILP64 build (libopenblas64) takes 64-bit integers; calling it through
    // the 32-bit CBLAS signature would pass garbage sizes.
    if (config_.find("USE64BITINT") != std::string::npos)
      throw PeerUnavailable(library_.path() + " is the 64-bit-integer build of OpenBLAS");
  }

  std::string_view name() const override { return "openblas"; }
  std::string description() const override { return config_ + " (" + library_.path() + ")"; }
  bool supports(DType dtype) const override { return cblas_.supports(dtype); }
  void set_threads(int threads) override { set_num_threads_(threads); }
  void gemm(DType dtype, const GemmShape& shape, const void* a, std::int64_t lda, const void* b,
            std::int64_t ldb, void* c, std::int64_t ldc) const override {
    cblas_.gemm(name(), dtype, shape, a, lda, b, ldb, c, ldc);
  }

 private:
  SharedLibrary library_;
  CblasGemm cblas_;
  void (*set_num_threads_)(int);
  std::string config_;
};

}  // namespace

std::unique_ptr<GemmPeer> make_openblas_peer(SharedLibrary library) {
  return std::make_unique<OpenBlasPeer>(std::move(library));
}

}  // namespace sfc::bench_detail
