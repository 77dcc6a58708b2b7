#include "sfc/settings.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "sfc/error.hpp"

namespace sfc {
namespace {

using enum BadSetting;

// Constant-initialized: libsfcblas reads it from a load-time constructor.
constexpr SettingInfo kSettings[] = {
    // core/
    {"SFC_AMX", "AMX tiles for bf16 where the CPU has them", "0 (off) or 1 (on)", "1", warn},
    {"OMP_NUM_THREADS", "the team size (checked as --threads is)",
     "a thread count 1..4096, or libgomp's list of counts", "every CPU this process may use", error},
    {"HWLOC_XMLFILE", "a topology XML file to fingerprint instead of this machine's",
     "a readable topology XML file", "this machine's topology", error},
    // db/
    {"SFC_FAULT", "fault injection for the crash-safety tests",
     "count, crash:POINT:N, sig{int,term,hup}:POINT:N or io:{fail-write,full}:N", "no faults", error},
    // timing/
    {"SFC_COLD_BYTES",
     "bytes of cold inputs a timing streams through, instead of evicting each timed run's operands from the "
     "caches",
     "a byte count up to half the memory",
     "unset: the operands' cache lines are evicted before each timed run (x86); elsewhere 2x the L3, within "
     "64 "
     "MiB..1 GiB",
     warn},
    // predictor/
    {"SFC_TUNING",
     "the tuning table, database or folder of tables sfc::gemm, libsfcgemm and libsfcblas answer from",
     "a path (one that cannot be read is each call's error)",
     "the tables installed in <prefix>/share/sfc-tune/tables, else the model's answers", warn},
    {"SFC_PLATFORM", "whose results a tuning file answers with",
     "this, any, or a platform hash of 16 hex digits", "this", error},
    {"SFC_RECORD", "count every GEMM shape run through sfc::gemm, the C API and the drop-in into this file",
     "a writable file path", "not recording", warn},
    // runtime/
    {"SFC_VERBOSE", "one line per GEMM call on stderr (shape, tier, configuration, time)",
     "0 or empty: off; anything else: on", "off", warn},
    {"SFC_TUNE", "online tuning: sfc::gemm tunes an untuned shape on the caller's own calls", "online",
     "off (no online tuning)", warn},
    {"SFC_TUNE_DB", "the database online tuning writes", "a file path", "sfc-tune.db", warn},
    {"SFC_TUNE_BUDGET_MS", "GEMM time per shape online tuning may spend", "milliseconds > 0", "500", warn},
    // blas/
    {"SFC_BLAS_MIN_FLOPS", "the drop-in BLAS's smallest GEMM for SFC-CA, in flops", "a number >= 0",
     "4194304 (2*128^3)", warn},
    {"SFC_BLAS_MIN_DIM", "the drop-in BLAS's smallest K (and output rows) for SFC-CA", "a number >= 0",
     "0 (none)", warn},
    {"SFC_BLAS_ROUTE", "the drop-in BLAS's routing: time both and run the faster, or SFC-CA", "race or sfc",
     "race (sfc with SFC_TUNE or SFC_RECORD)", warn},
    {"SFC_BLAS_FALLBACK", "the real BLAS the drop-in falls back to", "a BLAS library path",
     "the next one loaded", warn},
    {"SFC_BLAS_VERBOSE", "the drop-in BLAS's routing report at exit", "0 or empty: off; anything else: on",
     "off", warn},
    // bench/
    {"SFC_OPENBLAS_LIBRARY", "the OpenBLAS sfc-tune bench loads", "a library path",
     "the configured path, then the soname", warn},
    {"SFC_BLIS_LIBRARY", "the BLIS sfc-tune bench loads", "a library path",
     "the configured path, then the soname", warn},
    {"SFC_ONEDNN_LIBRARY", "the oneDNN sfc-tune bench loads", "a library path",
     "the configured path, then the soname", warn},
    // cli/
    {"SFC_LOG_LEVEL", "sfc-tune's log level", "trace, debug, info, warning, error, critical or off", "info",
     error},
    {"NO_COLOR", "no colour in sfc-tune's log (no-color.org)", "any non-empty value", "colour on a terminal",
     warn},
};

constexpr std::size_t kCount = std::size(kSettings);

// Whether a variable's bad value was named yet: once per process each.
std::atomic<bool> warned[kCount];

std::size_t index_of(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kCount; ++i)
    if (name == kSettings[i].name) return i;
  std::fprintf(stderr, "sfc-tune: bug: the environment variable %.*s is not in core/src/settings.cpp\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

// `text` on one line: a control character is written as an escape.
std::string one_line(std::string_view text) {
  std::string line;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      line += escaped;
    } else {
      line += c;
    }
  }
  return line;
}

void refuse(std::size_t index, std::string_view text) {
  const SettingInfo& setting = kSettings[index];
  if (setting.bad == error) throw Error(bad_setting_message(setting, text));
  if (!warned[index].exchange(true))
    std::fprintf(stderr, "sfc-tune: warning: %s\n", bad_setting_message(setting, text).c_str());
}

// The value of a set, non-empty variable, or nullptr.
const char* nonempty(std::size_t index) noexcept {
  const char* text = std::getenv(kSettings[index].name);
  return text && *text ? text : nullptr;
}

}  // namespace

std::span<const SettingInfo> settings() noexcept { return kSettings; }

const char* setting_value(std::string_view name) noexcept {
  return std::getenv(kSettings[index_of(name)].name);
}

bool setting_flag(std::string_view name) noexcept {
  const char* text = nonempty(index_of(name));
  return text && std::string_view(text) != "0";
}

std::optional<std::string> setting_text(std::string_view name) {
  if (const char* text = nonempty(index_of(name))) return std::string(text);
  return std::nullopt;
}

std::optional<std::string_view> setting_choice(std::string_view name,
                                               std::initializer_list<std::string_view> choices) {
  const std::size_t index = index_of(name);
  const char* text = nonempty(index);
  if (!text) return std::nullopt;
  for (const std::string_view& choice : choices)
    if (choice == text) return choice;
  refuse(index, text);
  return std::nullopt;
}

std::optional<double> setting_number(std::string_view name, double min, double max, bool above_min) {
  const std::size_t index = index_of(name);
  const char* text = nonempty(index);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end != text && !*end && std::isfinite(value) && (above_min ? value > min : value >= min) &&
      value <= max)
    return value;
  refuse(index, text);
  return std::nullopt;
}

std::optional<std::uint64_t> setting_count(std::string_view name, std::uint64_t min, std::uint64_t max) {
  const std::size_t index = index_of(name);
  const char* text = nonempty(index);
  if (!text) return std::nullopt;
  const std::string_view digits(text);
  std::uint64_t value = 0;
  const auto [end, failure] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (failure == std::errc() && end == digits.data() + digits.size() && value >= min && value <= max)
    return value;
  refuse(index, text);
  return std::nullopt;
}

void refuse_setting(std::string_view name, std::string_view text) { refuse(index_of(name), text); }

std::string bad_setting_message(const SettingInfo& setting, std::string_view text) {
  std::string message = std::string(setting.name) + "=" + one_line(text) + " is not " + setting.value;
  if (setting.bad == warn) message += std::string("; using ") + setting.fallback;
  return message;
}

}  // namespace sfc
