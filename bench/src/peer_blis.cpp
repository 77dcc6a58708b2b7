// BLIS (the OpenMP build) through its CBLAS interface.
#include <cstdint>
#include <string>

#include "peers.hpp"

namespace sfc::bench_detail {
namespace {

class BlisPeer final : public CblasPeer {
 public:
  explicit BlisPeer(SharedLibrary library)
      : CblasPeer(std::move(library)),
        // BLIS's dim_t is 64-bit on x86-64; an int64 argument is also read
        // correctly by a 32-bit build (the low half of the same register).
        set_num_threads_(library_.require<void (*)(std::int64_t)>("bli_thread_set_num_threads")),
        build_info_(library_.require<const char* (*)()>("bli_info_get_version_str")()) {
    // The value is small, so reading the low 32 bits of the gint_t result is
    // right whatever BLIS's integer size.
    const auto blas_int_bits = library_.require<std::int32_t (*)()>("bli_info_get_blas_int_type_size")();
    if (blas_int_bits != 32)
      throw PeerUnavailable(library_.path() + " is a BLIS build with " + std::to_string(blas_int_bits) +
                            "-bit BLAS integers");
    // The sub-configuration BLIS picked for this CPU: "generic" means its
    // reference kernels (Debian's build has no others), which the report
    // should say rather than let a reader assume optimised BLIS.
    const auto query_arch = library_.find<int (*)()>("bli_arch_query_id");
    const auto arch_name = library_.find<const char* (*)(int)>("bli_arch_string");
    if (query_arch != nullptr && arch_name != nullptr) {
      sub_configuration_ = arch_name(query_arch());
      build_info_ += ", sub-configuration " + sub_configuration_;
    }
  }

  std::string_view name() const override { return "blis"; }
  std::string description() const override { return "BLIS " + build_info_ + " (" + library_.path() + ")"; }
  void set_threads(int threads) override { set_num_threads_(threads); }
  std::string not_a_contender() const override {
    if (sub_configuration_ != "generic") return {};
    return "blis is left out of the best-peer ratio: its sub-configuration is 'generic' (BLIS's reference "
           "kernels, not an optimised build); set SFC_BLIS_LIBRARY to an optimised BLIS to compare with it";
  }

 private:
  void (*set_num_threads_)(std::int64_t);
  std::string build_info_;
  std::string sub_configuration_;  // "generic", "skx", "zen3", ...; empty when BLIS does not say
};

}  // namespace

std::unique_ptr<GemmPeer> make_blis_peer(SharedLibrary library) {
  return std::make_unique<BlisPeer>(std::move(library));
}

}  // namespace sfc::bench_detail
