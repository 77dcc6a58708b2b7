// The engine's element types and layouts as libsfcconf's C enums, for C++
// code that calls the C API (sfc::gemm, the CLI).
#pragma once
#include "sfc/gemm.hpp"
#include "sfcconf.h"

namespace sfc {

inline sfcconf_dtype to_sfcconf(DType dtype) {
  return dtype == DType::f32 ? SFCCONF_F32 : dtype == DType::f64 ? SFCCONF_F64 : SFCCONF_BF16;
}

inline sfcconf_layout to_sfcconf(Layout layout) {
  return layout == Layout::blocked     ? SFCCONF_BLOCKED
         : layout == Layout::row_major ? SFCCONF_ROW_MAJOR
                                       : SFCCONF_COL_MAJOR;
}

}  // namespace sfc
