#include "sfc/platform_fields.hpp"

#include <array>
#include <charconv>
#include <type_traits>

#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/record_fields.hpp"

namespace sfc {
namespace {

template <class Int>
Int parse_count(std::string_view name, std::string_view text) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool negative = false;
  if constexpr (std::is_signed_v<Int>) negative = value < 0;
  if (ec != std::errc{} || end != text.data() + text.size() || negative)
    throw Error(std::string(name) + ": expected a non-negative integer, got '" + std::string(text) + "'");
  // No core count or cache size comes near 2^53; the bound keeps every count
  // exact in JSON and within SQLite's signed 64-bit integers.
  if (static_cast<unsigned long long>(value) > (1ULL << 53))
    throw Error(std::string(name) + ": " + std::string(text) + " is out of range (at most 2^53)");
  return value;
}

void check_text(std::string_view name, std::string_view text) {
  try {
    check_printable(text);
  } catch (const Error& e) {
    throw Error(std::string(name) + ": " + e.what());
  }
}

// One entry per Platform member: a text field, or a count (int or size_t).
#define SFC_PLATFORM_TEXT(member, identity)                                                             \
  PlatformField {                                                                                       \
#member, false, identity, false,                                                                      \
        [](const Platform& p) { return p.member; }, [](Platform & p, std::string_view t) {                \
          check_text(#member, t);                                                                         \
          p.member = std::string(t);                                                                      \
        } \
  }
#define SFC_PLATFORM_COUNT(member, added_with_hwloc)                            \
  PlatformField {                                                               \
#member, true, true, added_with_hwloc,                                        \
                [](const Platform& p) { return std::to_string(p.member); },                   \
                [](Platform& p, std::string_view t) {                                         \
                  p.member = parse_count<decltype(p.member)>(#member, t);                     \
                } \
  }

const std::array<PlatformField, 10> kFields = {
    SFC_PLATFORM_TEXT(cpu_model, true),        SFC_PLATFORM_COUNT(cores, false),
    SFC_PLATFORM_COUNT(threads, false),        SFC_PLATFORM_COUNT(l1d_bytes, false),
    SFC_PLATFORM_COUNT(l2_bytes, false),       SFC_PLATFORM_COUNT(l3_bytes, false),
    SFC_PLATFORM_COUNT(numa_nodes, true),      SFC_PLATFORM_TEXT(isa, true),
    SFC_PLATFORM_TEXT(libxsmm_version, false), SFC_PLATFORM_TEXT(compiler, false),
};

#undef SFC_PLATFORM_TEXT
#undef SFC_PLATFORM_COUNT

}  // namespace

std::span<const PlatformField> platform_fields() { return kFields; }

std::string legacy_platform_hash(const Platform& p) {
  const std::string fields[] = {p.cpu_model,
                                std::to_string(p.cores),
                                std::to_string(p.threads),
                                std::to_string(p.l1d_bytes),
                                std::to_string(p.l2_bytes),
                                std::to_string(p.l3_bytes),
                                p.isa,
                                p.libxsmm_version,
                                p.compiler};
  return fingerprint(fields);
}

void verify_platform_hash(Platform& platform, const std::string& stored_hash) {
  if (stored_hash == platform.hash()) return;
  if (platform.numa_nodes == 0 && stored_hash == legacy_platform_hash(platform)) {
    platform.l3_bytes = 0;  // read by sysconf: neither per instance nor stable
    return;
  }
  throw Error("the platform hash " + stored_hash + " does not match its fields (they hash to " +
              platform.hash() + "): the platform block was edited or damaged");
}

}  // namespace sfc
