#include "value_list.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "sfc/error.hpp"

namespace sfc {
namespace {

// Enough for any grid a machine could tune; a typo like 1:1000000:+1 stops here.
constexpr std::size_t kMaxValues = 100000;

[[noreturn]] void fail(std::string_view what, std::string_view text, const std::string& reason) {
  throw Error(std::string(what) + " '" + std::string(text) + "': " + reason);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::int64_t parse_value(std::string_view text, std::string_view what, ValueRange range) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    fail(what, text, "not an integer");
  if (value < range.min || value > range.max)
    fail(what, text, "must lie in " + std::to_string(range.min) + ".." + std::to_string(range.max));
  return value;
}

std::vector<std::int64_t> parse_value_list(std::string_view text, std::string_view what, ValueRange range,
                                           std::string_view default_step) {
  if (text.empty()) fail(what, text, "an empty list");
  std::vector<std::int64_t> values;
  for (std::string_view item : split(text, ',')) {
    const std::vector<std::string_view> parts = split(item, ':');
    if (parts.size() == 1) {
      values.push_back(parse_value(item, what, range));
      continue;
    }
    if (parts.size() > 3) fail(what, text, std::string(item) + " is not LO:HI or LO:HI:STEP");
    const std::int64_t lo = parse_value(parts[0], what, range), hi = parse_value(parts[1], what, range);
    if (lo > hi) fail(what, text, "the range " + std::string(item) + " runs backwards");
    const std::string_view step = parts.size() == 3 ? parts[2] : default_step;
    const bool geometric = step.starts_with('x');
    const std::string_view amount = geometric || step.starts_with('+') ? step.substr(1) : step;
    std::int64_t by = 0;
    const auto [end, ec] = std::from_chars(amount.data(), amount.data() + amount.size(), by);
    if (amount.empty() || ec != std::errc{} || end != amount.data() + amount.size() ||
        by < (geometric ? 2 : 1))
      fail(what, text,
           "the step " + std::string(step) + " must be xF (multiply by F >= 2) or +D (add D >= 1)");
    for (std::int64_t v = lo;;) {
      if (values.size() >= kMaxValues)
        fail(what, text, "more than " + std::to_string(kMaxValues) + " values");
      values.push_back(v);
      if (geometric ? v > hi / by : v > hi - by) break;  // the next value would pass hi
      v = geometric ? v * by : v + by;
    }
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace sfc
