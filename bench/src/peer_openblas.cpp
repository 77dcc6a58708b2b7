// OpenBLAS through its CBLAS interface.
#include <string>

#include "peers.hpp"

namespace sfc::bench_detail {
namespace {

class OpenBlasPeer final : public CblasPeer {
 public:
  explicit OpenBlasPeer(SharedLibrary library)
      : CblasPeer(std::move(library)),
        set_num_threads_(library_.require<void (*)(int)>("openblas_set_num_threads")),
        config_(library_.require<const char* (*)()>("openblas_get_config")()) {
    // The ILP64 build (libopenblas64) takes 64-bit integers; calling it through
    // the 32-bit CBLAS signature would pass garbage sizes.
    if (config_.find("USE64BITINT") != std::string::npos)
      throw PeerUnavailable(library_.path() + " is the 64-bit-integer build of OpenBLAS");
  }

  std::string_view name() const override { return "openblas"; }
  std::string description() const override { return config_ + " (" + library_.path() + ")"; }
  void set_threads(int threads) override { set_num_threads_(threads); }

 private:
  void (*set_num_threads_)(int);
  std::string config_;
};

}  // namespace

std::unique_ptr<GemmPeer> make_openblas_peer(SharedLibrary library) {
  return std::make_unique<OpenBlasPeer>(std::move(library));
}

}  // namespace sfc::bench_detail
