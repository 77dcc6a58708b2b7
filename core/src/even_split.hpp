#pragma once
// Splitting a range into nearly equal parts: the K slices of layers and
// rounds, shared by the plan (which cuts them) and its decision (which sizes
// the longest).
#include <cstdint>

namespace sfc {

// Splits [0, n) into `parts` nearly equal ranges; returns the start of `part`.
inline std::int64_t split_point(std::int64_t n, std::int64_t parts, std::int64_t part) {
  return n * part / parts;
}

}  // namespace sfc
