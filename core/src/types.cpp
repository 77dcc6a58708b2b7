// Names of element types, layouts and shapes, as the CLI and the stores spell them.
#include <string>

#include "sfc/arch_context.hpp"
#include "sfc/gemm.hpp"

namespace sfc {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::blocked: return "blocked";
    case Layout::row_major: return "row";
    case Layout::col_major: return "col";
  }
  return "?";
}

std::string to_string(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

DType parse_dtype(std::string_view text) {
  if (text == "f32") return DType::f32;
  if (text == "f64") return DType::f64;
  if (text == "bf16") return DType::bf16;
  throw Error("unknown dtype '" + std::string(text) + "' (expected f32, f64 or bf16)");
}

Layout parse_layout(std::string_view text) {
  if (text == "blocked") return Layout::blocked;
  if (text == "row") return Layout::row_major;
  if (text == "col") return Layout::col_major;
  throw Error("unknown layout '" + std::string(text) + "' (expected blocked, row or col)");
}

std::size_t input_size(DType dtype) { return dtype_constants(dtype).input_bytes; }

std::size_t output_size(DType dtype) { return dtype_constants(dtype).output_bytes; }

}  // namespace sfc
