// Leaves the caller's floating-point exception flags as they were.
//
// A BLAS caller may read the flags after a GEMM (numpy does, to warn of
// invalid values and overflows in the product). What the library does around
// the GEMM's own arithmetic -- reading a table whose unmeasured entries are
// NaN, distances of +infinity, the model's estimates, timing -- must not set
// flags the product did not, so the work around a GEMM runs under this guard.
#pragma once
#include <cfenv>

namespace sfc {

class PreservedFpFlags {
 public:
  PreservedFpFlags() noexcept { std::fegetexceptflag(&saved_, FE_ALL_EXCEPT); }
  ~PreservedFpFlags() { std::fesetexceptflag(&saved_, FE_ALL_EXCEPT); }
  PreservedFpFlags(const PreservedFpFlags&) = delete;
  PreservedFpFlags& operator=(const PreservedFpFlags&) = delete;

 private:
  std::fexcept_t saved_;
};

}  // namespace sfc
