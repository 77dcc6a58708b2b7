// The parsers of the environment a run reads (OMP_NUM_THREADS, SFC_COLD_BYTES,
// SFC_TUNE_BUDGET_MS, SFC_PLATFORM): line i of the input is the value of
// variable i. Each value is accepted, refused with sfc::Error (the CLI's
// one-line refusal), or named on stderr and replaced by the default; what is
// accepted must lie in the range the parser promises.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_input.hpp"
#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"
#include "sfc/online_tuner.hpp"
#include "sfc/tuning_source.hpp"

namespace {

constexpr const char* kVariables[] = {"OMP_NUM_THREADS", "SFC_COLD_BYTES", "SFC_TUNE_BUDGET_MS",
                                      "SFC_PLATFORM"};

// OMP_NUM_THREADS's first count, read independently of the parser under test:
// digits with spaces around them, as libgomp reads it.
bool first_count_in_range(const char* text) {
  while (std::isspace(static_cast<unsigned char>(*text))) ++text;
  if (!std::isdigit(static_cast<unsigned char>(*text))) return false;  // no sign
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  while (std::isspace(static_cast<unsigned char>(*end))) ++end;
  return errno == 0 && (*end == '\0' || *end == ',') && value >= 1 && value <= sfc::kMaxThreads;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const char* name : kVariables) {
    const std::string value(text.substr(0, text.find('\n')));
    text = text.find('\n') == std::string_view::npos ? std::string_view() : text.substr(text.find('\n') + 1);
    ::setenv(name, value.c_str(), 1);  // a NUL ends the value, as it would in a real environment
  }
  ::setenv("SFC_TUNE", "online", 1);

  const char* threads = std::getenv("OMP_NUM_THREADS");
  try {
    sfc::check_thread_environment();
    if (*threads && !first_count_in_range(threads))
      sfc::fuzz::broken("OMP_NUM_THREADS accepted out of range");
  } catch (const sfc::Error&) {
    if (first_count_in_range(threads)) sfc::fuzz::broken("OMP_NUM_THREADS refused within range");
  }

  const std::size_t cold = sfc::cold_footprint_bytes();
  if (cold > (std::size_t(1) << 62)) sfc::fuzz::broken("SFC_COLD_BYTES accepted beyond memory");

  if (const auto online = sfc::OnlineTuning::from_environment())
    if (!(online->budget_seconds > 0) || !std::isfinite(online->budget_seconds))
      sfc::fuzz::broken("SFC_TUNE_BUDGET_MS accepted as no positive finite budget");

  try {
    const sfc::PlatformChoice choice = sfc::PlatformChoice::parse_or_environment("");
    if (choice.kind == sfc::PlatformChoice::Kind::hash && choice.hash.size() != 16)
      sfc::fuzz::broken("SFC_PLATFORM accepted a hash that is not 16 hex digits");
  } catch (const sfc::Error&) {}
  return 0;
}
