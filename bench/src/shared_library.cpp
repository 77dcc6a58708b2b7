#include "shared_library.hpp"

#include <dlfcn.h>

namespace sfc::bench_detail {

SharedLibrary::SharedLibrary(const std::string& path) : path_(path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* reason = dlerror();
    throw PeerUnavailable(reason != nullptr ? reason : "cannot load " + path);
  }
}

void* SharedLibrary::find_address(const char* symbol) const { return dlsym(handle_, symbol); }

void* SharedLibrary::require_address(const char* symbol) const {
  void* address = dlsym(handle_, symbol);
  if (address == nullptr) throw PeerUnavailable(path_ + " has no symbol " + symbol);
  return address;
}

}  // namespace sfc::bench_detail
