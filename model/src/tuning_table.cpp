#include "sfc/tuning_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <tuple>

#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/record_fields.hpp"
#include "sfc/text_file.hpp"

namespace sfc {
namespace {

// Version 3 added the platform's numa_nodes and hashes the hardware only
// (sfc/platform.hpp); version 2 added the layout to every shape line. Both
// older versions are still read (version 1: every shape tuned blocked), their
// platform re-keyed by verify_platform_hash().
constexpr int kVersion = 3;
constexpr std::string_view kMagic = "sfc-table 3";

// Walks the file line by line and turns every problem into "FILE:LINE: reason".
class TableReader {
 public:
  TableReader(const std::string& path, std::string_view text) : path_(path), rest_(text) {}

  bool next_line() {
    if (rest_.empty()) return false;
    const std::size_t end = rest_.find('\n');
    if (end == std::string_view::npos) fail("the file ends in the middle of a line (truncated?)");
    line_ = rest_.substr(0, end);
    if (line_.ends_with('\r')) line_.remove_suffix(1);  // tolerate CRLF
    rest_.remove_prefix(end + 1);
    ++number_;
    return true;
  }
  std::string_view line() const { return line_; }

  // Splits the current line at single spaces.
  std::vector<std::string_view> tokens() const {
    std::vector<std::string_view> out;
    std::string_view rest = line_;
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      out.push_back(rest.substr(0, space));
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space + 1);
    }
    return out;
  }

  template <class Number>
  Number number(std::string_view token, std::string_view what) const {
    Number value{};
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc{} || end != token.data() + token.size() || token.empty())
      fail(std::string(what) + " is not a number: '" + std::string(token) + "'");
    return value;
  }

  [[noreturn]] void fail(const std::string& reason) const {
    throw Error(path_ + ":" + std::to_string(number_) + ": " + reason);
  }

 private:
  const std::string& path_;
  std::string_view rest_, line_;
  int number_ = 0;
};

void read_platform_line(TableReader& in, Platform& platform, std::set<std::string_view>& seen,
                        std::string& hash) {
  // "platform <field> <value...>": the value is everything after the second space.
  std::string_view rest = in.line().substr(std::string_view("platform ").size());
  const std::size_t space = rest.find(' ');
  if (space == std::string_view::npos) in.fail("a platform line needs a field and a value");
  const std::string_view field = rest.substr(0, space), value = rest.substr(space + 1);
  if (!seen.insert(field).second) in.fail("platform field '" + std::string(field) + "' appears twice");
  if (field == "hash") {
    hash = std::string(value);
    return;
  }
  for (const PlatformField& f : platform_fields()) {
    if (f.name != field) continue;
    try {
      f.set(platform, value);
    } catch (const Error& e) {
      in.fail(std::string("platform ") + e.what());
    }
    return;
  }
  in.fail("unknown platform field '" + std::string(field) + "'");
}

TunedShape read_shape_line(TableReader& in, int version) {
  std::vector<std::string_view> t = in.tokens();
  const std::size_t tokens = (version == 1 ? 8 : 9) + kConfigCount;
  if (t.size() != tokens)
    in.fail("a shape line has " + std::to_string(tokens) + " fields (shape M N K dtype threads " +
            (version == 1 ? "" : "layout ") + "KL KBF and " + std::to_string(kConfigCount) +
            " times), this one has " + std::to_string(t.size()));
  TunedShape s;
  s.shape = {in.number<std::int64_t>(t[1], "M"), in.number<std::int64_t>(t[2], "N"),
             in.number<std::int64_t>(t[3], "K")};
  for (const std::int64_t size : {s.shape.m, s.shape.n, s.shape.k})
    if (size < 1 || size > kMaxGemmSize) in.fail("M, N and K must be in 1.." + std::to_string(kMaxGemmSize));
  try {
    s.dtype = parse_dtype(t[4]);
  } catch (const Error& e) {
    in.fail(e.what());
  }
  s.threads = in.number<int>(t[5], "threads");
  if (version > 1) {
    try {
      s.layout = parse_layout(t[6]);
    } catch (const Error& e) {
      in.fail(e.what());
    }
    t.erase(t.begin() + 6);  // the rest reads like version 1
  }
  s.k_layers = in.number<int>(t[6], "K_layers");
  s.k_block_factor = in.number<int>(t[7], "k_block_factor");
  if (s.threads < 1) in.fail("threads must be positive");
  if (!s.winner().valid()) in.fail("the winner K_layers k_block_factor must lie in 1..8 x 1..8");
  for (int i = 0; i < kConfigCount; ++i) {
    const float seconds = in.number<float>(t[8 + i], "a time");
    if (!std::isnan(seconds) && !(seconds >= kMinSeconds && seconds <= kMaxSeconds))
      in.fail("time " + std::to_string(i + 1) + " must be nan or in 1e-12..1e6 seconds, got '" +
              std::string(t[8 + i]) + "'");
    s.seconds[i] = seconds;
  }
  if (std::isnan(s.seconds[config_index(s.k_layers, s.k_block_factor)]))
    in.fail("the winning configuration has no time");
  return s;
}

void append_time(std::string& out, float seconds) {
  if (std::isnan(seconds)) {
    out += " nan";  // printf may write "-nan"
    return;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, " %.6g", static_cast<double>(seconds));
  out += buffer;
}

}  // namespace

void Calibration::check() const {
  for (const double value : {gamma_gflops_per_core, beta_gbytes_per_s})
    if (!(value == 0 || (value > 0 && value <= 1e6))) {
      char text[96];
      std::snprintf(text, sizeof text, "got gamma %g, beta %g", gamma_gflops_per_core, beta_gbytes_per_s);
      throw Error(std::string("calibration values must be 0 (unknown) or in (0, 1e6], ") + text);
    }
}

TuningTable TuningTable::load(const std::string& path) {
  const std::string text = read_text_file(path);
  TableReader in(path, text);
  const bool read = in.next_line();
  const int version = !read                        ? 0
                      : in.line() == kMagic        ? kVersion
                      : in.line() == "sfc-table 2" ? 2
                      : in.line() == "sfc-table 1" ? 1
                                                   : 0;
  if (version == 0) {
    if (in.line().starts_with("sfc-table "))
      in.fail("unsupported table version '" + std::string(in.line()) + "' (this build reads '" +
              std::string(kMagic) + "')");
    in.fail("not a tuning table (the first line must be '" + std::string(kMagic) + "')");
  }

  TuningTable table;
  std::set<std::string_view> platform_seen;
  std::string hash;
  bool have_calibration = false;
  long expected_shapes = -1;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, DType, int, Layout>> shapes_seen;

  while (in.next_line()) {
    const std::string_view line = in.line();
    if (expected_shapes >= 0) {
      if (!line.starts_with("shape ")) in.fail("expected a shape line");
      if (static_cast<long>(table.shapes.size()) == expected_shapes)
        in.fail("more shape lines than the " + std::to_string(expected_shapes) + " announced");
      TunedShape s = read_shape_line(in, version);
      if (!shapes_seen.emplace(s.shape.m, s.shape.n, s.shape.k, s.dtype, s.threads, s.layout).second)
        in.fail("this shape, dtype, thread count and layout appear twice");
      table.shapes.push_back(s);
    } else if (line.starts_with("platform ")) {
      read_platform_line(in, table.platform, platform_seen, hash);
    } else if (line.starts_with("calibration ")) {
      const std::vector<std::string_view> t = in.tokens();
      if (have_calibration) in.fail("calibration appears twice");
      if (t.size() != 3) in.fail("expected 'calibration <gamma> <beta>'");
      table.calibration = {in.number<double>(t[1], "gamma"), in.number<double>(t[2], "beta")};
      try {
        table.calibration.check();
      } catch (const Error& e) {
        in.fail(e.what());
      }
      have_calibration = true;
    } else if (line.starts_with("shapes ")) {
      const std::vector<std::string_view> t = in.tokens();
      if (t.size() != 2) in.fail("expected 'shapes <count>'");
      expected_shapes = in.number<long>(t[1], "the shape count");
      if (expected_shapes < 0) in.fail("the shape count must be >= 0");
      for (const PlatformField& f : platform_fields())
        if (!platform_seen.count(f.name) && !(version < 3 && f.added_with_hwloc))
          in.fail("the platform lines are incomplete: 'platform " + std::string(f.name) +
                  "' is missing (every field and the hash come before 'shapes')");
      if (!platform_seen.count("hash"))
        in.fail("the platform lines are incomplete: 'platform hash' is missing");
      if (!have_calibration) in.fail("the calibration line must come before 'shapes'");
      try {
        verify_platform_hash(table.platform, hash);
      } catch (const Error& e) {
        in.fail(e.what());
      }
      // A shape line is several hundred bytes: never reserve more than the text could hold.
      table.shapes.reserve(std::min(static_cast<std::size_t>(expected_shapes), text.size() / 64));
    } else {
      in.fail("unexpected line '" + std::string(line.substr(0, 40)) + "'");
    }
  }
  if (expected_shapes < 0) in.fail("the file ends before its 'shapes' line (truncated?)");
  if (static_cast<long>(table.shapes.size()) != expected_shapes)
    in.fail("the file ends after " + std::to_string(table.shapes.size()) + " of " +
            std::to_string(expected_shapes) + " shape lines (truncated?)");
  return table;
}

void TuningTable::save(const std::string& path) const {
  std::string out;
  out.reserve(256 + shapes.size() * (48 + 12 * kConfigCount));
  out.append(kMagic).append("\n");
  for (const PlatformField& f : platform_fields()) {
    const std::string value = f.get(platform);
    if (value.find_first_of("\r\n") != std::string::npos)
      throw Error("cannot write " + path + ": platform " + std::string(f.name) + " contains a line break");
    out.append("platform ").append(f.name).append(" ").append(value).append("\n");
  }
  out.append("platform hash ").append(platform.hash()).append("\n");
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "calibration %.17g %.17g\n", calibration.gamma_gflops_per_core,
                calibration.beta_gbytes_per_s);
  out.append(buffer);
  out.append("shapes ").append(std::to_string(shapes.size())).append("\n");
  for (const TunedShape& s : shapes) {
    std::snprintf(buffer, sizeof buffer, "shape %lld %lld %lld ", static_cast<long long>(s.shape.m),
                  static_cast<long long>(s.shape.n), static_cast<long long>(s.shape.k));
    out.append(buffer).append(to_string(s.dtype));
    std::snprintf(buffer, sizeof buffer, " %d ", s.threads);
    out.append(buffer).append(to_string(s.layout));
    std::snprintf(buffer, sizeof buffer, " %d %d", s.k_layers, s.k_block_factor);
    out.append(buffer);
    for (float seconds : s.seconds) append_time(out, seconds);
    out.append("\n");
  }
  write_text_file_atomically(path, out);
}

}  // namespace sfc
