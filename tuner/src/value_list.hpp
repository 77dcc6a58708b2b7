// Lists of integers as the command line writes them: "256,512,1024",
// "512:8192:x2" (a geometric range), "1:8" or "64:256:+64" (arithmetic).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace sfc {

struct ValueRange {
  std::int64_t min, max;  // every value must lie in [min, max]
};

// Comma-separated items, each a value or LO:HI[:STEP]; STEP is xF (multiply
// by F >= 2) or +D / D (add D >= 1); `default_step` applies to a bare LO:HI.
// Returns the values ascending, without duplicates. Throws sfc::Error
// "<what> '<text>': <reason>".
std::vector<std::int64_t> parse_value_list(std::string_view text, std::string_view what, ValueRange range,
                                           std::string_view default_step);

// One integer in [range.min, range.max]; throws sfc::Error "<what> '<text>': <reason>".
std::int64_t parse_value(std::string_view text, std::string_view what, ValueRange range);

}  // namespace sfc
