// The fields of a Platform fingerprint as (name, text) pairs, in the order the
// struct declares them. Every file format that stores a Platform (tuning table,
// SQLite columns, CSV, JSON) walks this one list, so a field added to Platform
// is added here once.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "sfc/platform.hpp"

namespace sfc {

struct PlatformField {
  std::string_view name;  // also the column / key name in every format
  bool numeric;           // stored as an integer where the format has types
  std::string (*get)(const Platform&);
  // Throws sfc::Error("<name>: ...") when a numeric field is not a non-negative integer.
  void (*set)(Platform&, std::string_view text);
};

std::span<const PlatformField> platform_fields();

}  // namespace sfc
