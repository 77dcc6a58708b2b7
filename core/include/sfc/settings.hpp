// Every environment variable sfc-tune reads, in one table (name, meaning,
// what a value must be, its default, and whether a bad value is an error),
// and the typed readers through which every layer reads them: no other
// source calls getenv. Each reader parses and validates in one place, with
// one policy for a bad value: a variable whose table entry warns prints
//   sfc-tune: warning: SFC_X=<value> is not <what a value must be>; using <default>
// once per process on stderr and the reader answers "unset" (the caller's
// default, which the table names); one whose entry says error throws
// sfc::Error with the same sentence. `sfc-tune help environment`, the man
// page and docs/reference.md are generated from the table.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sfc {

// What a value that is not what `SettingInfo::value` says gets.
enum class BadSetting {
  warn,   // one warning line per process, then the default
  error,  // sfc::Error: the command (or call) is refused
};

struct SettingInfo {
  const char* name;
  const char* meaning;
  const char* value;     // what a value must be
  const char* fallback;  // the default: what unset (or empty) means
  BadSetting bad = BadSetting::warn;
};

// The table, in the order of the layers that read them.
std::span<const SettingInfo> settings() noexcept;

// The raw value of the variable `name`, or nullptr when it is unset. `name`
// must be in settings(): a name missing there is a bug, reported on stderr
// before the process aborts (so for every reader below). Every reader reads
// the environment anew at each call, like getenv: callers on a hot path keep
// the answer themselves (a function-local static).
const char* setting_value(std::string_view name) noexcept;

// Unset, empty or "0": false; anything else: true (never a bad value).
bool setting_flag(std::string_view name) noexcept;

// The value as text (a path, a library), or nullopt when unset or empty.
// Not checked here: whoever opens it reports what fails.
std::optional<std::string> setting_text(std::string_view name);

// One of `choices` (the element itself, so it outlives the call when the
// choices are literals), or nullopt when unset, empty or bad.
std::optional<std::string_view> setting_choice(std::string_view name,
                                               std::initializer_list<std::string_view> choices);

// A finite number in [min, max] ((min, max] with `above_min`), or nullopt
// when unset, empty or bad.
std::optional<double> setting_number(std::string_view name, double min, double max, bool above_min = false);

// A whole number in [min, max] (a count, a byte size), or nullopt when
// unset, empty or bad.
std::optional<std::uint64_t> setting_count(std::string_view name, std::uint64_t min, std::uint64_t max);

// For a value a layer parses itself (a list, a spec): the bad-value policy
// of `name` applied to `text` (a warning once, or sfc::Error thrown).
void refuse_setting(std::string_view name, std::string_view text);

// The sentence a bad value gets: "SFC_X=<value> is not <what>; using <default>"
// (for an error-policy variable: "SFC_X=<value> is not <what>"), on one line.
std::string bad_setting_message(const SettingInfo& setting, std::string_view text);

}  // namespace sfc
