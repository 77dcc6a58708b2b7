// Every environment variable sfc-tune reads, in one table (name, meaning,
// what a value must be), and the one function through which every layer
// reads them: no other source calls getenv. Each value is still parsed where
// it is used, with that layer's message for a bad value (a line on stderr
// naming the variable, then the default), as docs/reference.md lists them.
#pragma once
#include <span>
#include <string_view>

namespace sfc {

struct SettingInfo {
  const char* name;
  const char* meaning;
  const char* value;  // what a value must be, and what happens otherwise
};

// The table, in the order of the layers that read them.
std::span<const SettingInfo> settings() noexcept;

// The value of the variable `name`, or nullptr when it is unset. `name` must
// be in settings(): a name missing there is a bug, reported on stderr before
// the process aborts. Read anew at each call, like getenv (callers that read
// once per process keep the answer themselves).
const char* setting_value(std::string_view name) noexcept;

}  // namespace sfc
