#include "sfc/shape_grid.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "sfc/error.hpp"
#include "sfc/text_file.hpp"
#include "value_list.hpp"

namespace sfc {
namespace {

constexpr ValueRange kDimensions{1, ShapeGrid::kMaxDimension};
constexpr std::size_t kMaxShapes = 10'000'000;

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while ((at = text.find_first_not_of(" \t\r\n", at)) != std::string_view::npos) {
    const std::size_t end = text.find_first_of(" \t\r\n", at);
    out.push_back(text.substr(at, end == std::string_view::npos ? end : end - at));
    at = end;
  }
  return out;
}

using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

}  // namespace

Shard Shard::parse(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    throw Error("shard '" + std::string(text) + "': expected I/N, e.g. 0/4");
  const std::int64_t count = parse_value(text.substr(slash + 1), "shard count", {1, 1'000'000});
  const std::int64_t index = parse_value(text.substr(0, slash), "shard index", {0, count - 1});
  return {static_cast<int>(index), static_cast<int>(count)};
}

std::string Shard::to_string() const { return std::to_string(index) + "/" + std::to_string(count); }

ShapeGrid::ShapeGrid(const std::vector<GemmShape>& shapes) {
  std::set<ShapeKey> seen;
  for (const GemmShape& s : shapes)
    if (seen.emplace(s.m, s.n, s.k).second) shapes_.push_back(s);
}

ShapeGrid ShapeGrid::parse(std::string_view spec) {
  const std::vector<std::string_view> terms = words(spec);
  const std::string quoted = "grid '" + std::string(spec) + "'";
  if (terms.empty()) throw Error(quoted + ": empty (give a list like 256,512 or m=... n=... k=...)");

  std::vector<std::int64_t> lists[3];
  if (terms.size() == 1 && terms[0].find('=') == std::string_view::npos) {
    lists[0] = parse_value_list(terms[0], "grid", kDimensions, "x2");
    lists[1] = lists[2] = lists[0];
  } else {
    for (std::string_view term : terms) {
      const std::size_t eq = term.find('=');
      const std::string_view name = term.substr(0, eq == std::string_view::npos ? 0 : eq);
      const int dim = name == "m" || name == "M"   ? 0
                      : name == "n" || name == "N" ? 1
                      : name == "k" || name == "K" ? 2
                                                   : -1;
      if (dim < 0)
        throw Error(quoted + ": '" + std::string(term) +
                    "' is not m=LIST, n=LIST or k=LIST (a single list without names sets all three)");
      if (!lists[dim].empty()) throw Error(quoted + ": " + std::string(name) + " is given twice");
      lists[dim] =
          parse_value_list(term.substr(eq + 1), "grid dimension " + std::string(name), kDimensions, "x2");
    }
    for (int dim = 0; dim < 3; ++dim)
      if (lists[dim].empty()) throw Error(quoted + ": " + std::string(1, "mnk"[dim]) + "=LIST is missing");
  }
  if (lists[0].size() * lists[1].size() * lists[2].size() > kMaxShapes)
    throw Error(quoted + ": more than " + std::to_string(kMaxShapes) + " shapes");

  ShapeGrid grid;
  for (std::int64_t m : lists[0])
    for (std::int64_t n : lists[1])
      for (std::int64_t k : lists[2]) grid.shapes_.push_back({m, n, k});
  return grid;
}

ShapeGrid ShapeGrid::load(const std::string& path) {
  // The reader every file of outside input goes through: a FIFO, a device or a
  // directory is refused without reading (or blocking on) it, and the size is bounded.
  const std::string text = read_text_file(path);
  std::vector<GemmShape> shapes;
  std::string_view rest = text;
  for (int number = 1; !rest.empty(); ++number) {
    const std::size_t end = rest.find('\n');
    std::string_view content = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    content = content.substr(0, content.find('#'));
    const std::vector<std::string_view> fields = words(content);
    if (fields.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    if (fields.size() != 3)
      throw Error(where + ": expected three sizes 'M N K', got " + std::to_string(fields.size()) + " fields");
    shapes.push_back({parse_value(fields[0], where + ": M", kDimensions),
                      parse_value(fields[1], where + ": N", kDimensions),
                      parse_value(fields[2], where + ": K", kDimensions)});
    if (shapes.size() > kMaxShapes)
      throw Error("shape file " + path + " lists more than " + std::to_string(kMaxShapes) + " shapes");
  }
  if (shapes.empty()) throw Error("shape file " + path + " lists no shapes");
  return ShapeGrid(shapes);
}

ShapeGrid ShapeGrid::random(int count, std::int64_t lo, std::int64_t hi, std::uint64_t seed) {
  if (count < 1 || count > kMaxRandomShapes)
    throw Error("--random needs a shape count in 1.." + std::to_string(kMaxRandomShapes) + ", got " +
                std::to_string(count));
  if (lo < 1 || lo > hi || hi > kMaxDimension)
    throw Error("the random range " + std::to_string(lo) + ":" + std::to_string(hi) +
                " must satisfy 1 <= LO <= HI <= " + std::to_string(kMaxDimension));
  const double span = static_cast<double>(hi - lo + 1);
  if (static_cast<double>(count) > span * span * span)
    throw Error("the range " + std::to_string(lo) + ":" + std::to_string(hi) + " holds fewer than " +
                std::to_string(count) + " distinct shapes");
  // mt19937_64's output is fixed by the standard; the real distributions of
  // <random> are not, so the log-uniform draw is written out here.
  std::mt19937_64 generator(seed);
  const double log_lo = std::log(static_cast<double>(lo)), log_hi = std::log(static_cast<double>(hi) + 1.0);
  auto draw = [&] {
    const double unit = static_cast<double>(generator() >> 11) * 0x1.0p-53;  // [0, 1)
    const auto value = static_cast<std::int64_t>(std::exp(log_lo + unit * (log_hi - log_lo)));
    return std::clamp(value, lo, hi);
  };
  std::set<ShapeKey> seen;
  std::vector<GemmShape> shapes;
  // Duplicates are redrawn; the bound only guards against an unlucky tiny range.
  for (long attempts = 0; static_cast<int>(shapes.size()) < count; ++attempts) {
    if (attempts > 1000L * count)
      throw Error("could not draw " + std::to_string(count) + " distinct shapes from " + std::to_string(lo) +
                  ":" + std::to_string(hi));
    const GemmShape s{draw(), draw(), draw()};
    if (seen.emplace(s.m, s.n, s.k).second) shapes.push_back(s);
  }
  return ShapeGrid(shapes);
}

ShapeGrid ShapeGrid::shard(const Shard& shard) const {
  ShapeGrid part;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < shapes_.size();
       i += static_cast<std::size_t>(shard.count))
    part.shapes_.push_back(shapes_[i]);
  return part;
}

std::pair<std::int64_t, std::int64_t> parse_dimension_range(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    throw Error("range '" + std::string(text) + "': expected LO:HI, e.g. 128:8192");
  const std::int64_t lo = parse_value(text.substr(0, colon), "range LO", kDimensions);
  const std::int64_t hi = parse_value(text.substr(colon + 1), "range HI", kDimensions);
  if (lo > hi) throw Error("range '" + std::string(text) + "' runs backwards");
  return {lo, hi};
}

}  // namespace sfc
