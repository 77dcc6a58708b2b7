#include "sfc/platform_fields.hpp"

#include <array>
#include <charconv>
#include <type_traits>

#include "sfc/error.hpp"

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
  return value;
}

// One entry per Platform member: a text field, or a count (int or size_t).
#define SFC_PLATFORM_TEXT(member)                                                 \
  PlatformField{#member, false, [](const Platform& p) { return p.member; },      \
                [](Platform& p, std::string_view t) { p.member = std::string(t); }}
#define SFC_PLATFORM_COUNT(member)                                                          \
  PlatformField{#member, true, [](const Platform& p) { return std::to_string(p.member); }, \
                [](Platform& p, std::string_view t) {                                      \
                  p.member = parse_count<decltype(p.member)>(#member, t);                  \
                }}

const std::array<PlatformField, 9> kFields = {
    SFC_PLATFORM_TEXT(cpu_model),        SFC_PLATFORM_COUNT(cores),
    SFC_PLATFORM_COUNT(threads),         SFC_PLATFORM_COUNT(l1d_bytes),
    SFC_PLATFORM_COUNT(l2_bytes),        SFC_PLATFORM_COUNT(l3_bytes),
    SFC_PLATFORM_TEXT(isa),              SFC_PLATFORM_TEXT(libxsmm_version),
    SFC_PLATFORM_TEXT(compiler),
};

#undef SFC_PLATFORM_TEXT
#undef SFC_PLATFORM_COUNT

}  // namespace

std::span<const PlatformField> platform_fields() { return kFields; }

}  // namespace sfc
