// Private to bench/: opening a peer library and finding its entry points.
#pragma once
#include <stdexcept>
#include <string>

namespace sfc::bench_detail {

// Why a peer cannot be used (library missing, symbol missing, unsupported
// build). load_peer() turns it into the note that the peer is skipped.
class PeerUnavailable : public std::runtime_error {
 public:
  explicit PeerUnavailable(const std::string& why) : std::runtime_error(why) {}
};

// A library opened with dlopen(RTLD_NOW | RTLD_LOCAL): RTLD_LOCAL keeps its
// BLAS symbols out of the global scope, so peers that export the same names
// (and LIBXSMM's own sgemm_) never resolve to each other.
//
// It is never closed: OpenBLAS and the OpenMP runtimes keep worker threads
// alive, and unloading code those threads may still run is not safe. Peers
// live until the process exits.
class SharedLibrary {
 public:
  // Throws PeerUnavailable with the loader's reason.
  explicit SharedLibrary(const std::string& path);

  const std::string& path() const { return path_; }

  // The symbol as a function pointer of type Fn, or nullptr if it is absent.
  template <class Fn>
  Fn find(const char* symbol) const {
    return reinterpret_cast<Fn>(find_address(symbol));
  }
  // The symbol as a function pointer; throws PeerUnavailable if it is absent.
  template <class Fn>
  Fn require(const char* symbol) const {
    return reinterpret_cast<Fn>(require_address(symbol));
  }

 private:
  void* find_address(const char* symbol) const;
  void* require_address(const char* symbol) const;

  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace sfc::bench_detail
