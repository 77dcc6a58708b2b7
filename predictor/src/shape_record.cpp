#include "sfc/shape_record.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sfc/analytical_model.hpp"
#include "sfc/error.hpp"
#include "sfc/text_file.hpp"

namespace sfc {
namespace {

constexpr int kFields = 11;
constexpr const char* kColumns = "# m n k dtype threads layout trans_a trans_b calls tier distance";
// The most threads a key may name: far above any machine, low enough that a
// typo (a size in the threads column) is caught.
constexpr int kMaxRecordThreads = 1 << 16;

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

// Reads one line's fields, each error naming the file, the line and the field.
class LineReader {
 public:
  LineReader(const std::string& name, std::size_t line) : where_(name + ":" + std::to_string(line) + ": ") {}

  [[noreturn]] void fail(const std::string& why) const { throw RecordFormatError(where_ + why); }

  template <class Int>
  Int integer(std::string_view text, const char* what, Int lo, Int hi) const {
    Int value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < lo || value > hi)
      fail(std::string(what) + " '" + std::string(text) + "' is not an integer in " + std::to_string(lo) +
           ".." + std::to_string(hi));
    return value;
  }

  RecordTranspose transpose(std::string_view text, const char* what) const {
    if (text == "N") return RecordTranspose::none;
    if (text == "T") return RecordTranspose::transpose;
    if (text == "?") return RecordTranspose::unknown;
    fail(std::string(what) + " '" + std::string(text) + "' is not N, T or ?");
  }

  Tier tier(std::string_view text) const {
    for (const Tier t : {Tier::exact, Tier::nearest, Tier::model, Tier::default_config})
      if (text == to_string(t)) return t;
    fail("tier '" + std::string(text) + "' is not exact, nearest, model or default");
  }

  double distance(std::string_view text) const {
    if (text == "inf") return std::numeric_limits<double>::infinity();
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !(value >= 0) || !std::isfinite(value))
      fail("distance '" + std::string(text) + "' is not a number >= 0 or inf");
    return value;
  }

  template <class Parse>
  auto named(std::string_view text, const char* what, Parse&& parse) const {
    try {
      return parse(text);
    } catch (const Error& e) {
      fail(std::string(what) + ": " + e.what());
    }
  }

 private:
  std::string where_;
};

}  // namespace

std::string_view to_string(RecordTranspose transpose) {
  switch (transpose) {
    case RecordTranspose::none: return "N";
    case RecordTranspose::transpose: return "T";
    case RecordTranspose::unknown: return "?";
  }
  return "?";
}

std::string describe(const RecordKey& key) {
  std::string text = to_string(key.shape()) + " " + std::string(to_string(key.dtype)) + " t" +
                     std::to_string(key.threads) + " " + std::string(to_string(key.layout));
  if (key.trans_a != RecordTranspose::unknown || key.trans_b != RecordTranspose::unknown) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on a chain of + here.
    text += ' ';
    text += to_string(key.trans_a);
    text += to_string(key.trans_b);
  }
  return text;
}

ShapeRecord ShapeRecord::parse(std::string_view text, const std::string& name) {
  ShapeRecord record;
  bool header = false;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields.empty() || fields[0].front() == '#') continue;
    const LineReader reader(name, line_number);
    if (!header) {
      // The first line that is not blank names the format: anything else is
      // some other file given by mistake, refused before a number is read.
      if (fields.size() != 2 || fields[0] != kFormat)
        reader.fail("not a shape record (the first line must be '" + std::string(kFormat) + " " +
                    std::to_string(kVersion) + "')");
      const int version = reader.integer(fields[1], "version", 1, std::numeric_limits<int>::max());
      if (version != kVersion)
        reader.fail("shape record version " + std::to_string(version) + " is newer than this build reads (" +
                    std::to_string(kVersion) + ")");
      header = true;
      continue;
    }
    if (fields.size() != kFields)
      reader.fail("expected " + std::to_string(kFields) +
                  " fields (m n k dtype threads layout trans_a trans_b calls tier distance), got " +
                  std::to_string(fields.size()));
    RecordedShape shape;
    shape.key.m = reader.integer<std::int64_t>(fields[0], "m", 1, max_gemm_size);
    shape.key.n = reader.integer<std::int64_t>(fields[1], "n", 1, max_gemm_size);
    shape.key.k = reader.integer<std::int64_t>(fields[2], "k", 1, max_gemm_size);
    shape.key.dtype = reader.named(fields[3], "dtype", [](std::string_view t) { return parse_dtype(t); });
    shape.key.threads = reader.integer(fields[4], "threads", 1, kMaxRecordThreads);
    shape.key.layout = reader.named(fields[5], "layout", [](std::string_view t) { return parse_layout(t); });
    shape.key.trans_a = reader.transpose(fields[6], "trans_a");
    shape.key.trans_b = reader.transpose(fields[7], "trans_b");
    shape.calls =
        reader.integer<std::uint64_t>(fields[8], "calls", 0, std::numeric_limits<std::uint64_t>::max());
    shape.tier = reader.tier(fields[9]);
    shape.distance = reader.distance(fields[10]);
    record.add(shape);  // a key listed twice (a hand-edited file) counts both lines' calls
  }
  if (!header)
    throw RecordFormatError(name + ": empty: not a shape record (no '" + std::string(kFormat) + "' line)");
  return record;
}

ShapeRecord ShapeRecord::load(const std::string& path) { return parse(read_text_file(path), path); }

void ShapeRecord::add(const RecordedShape& shape) {
  const auto [at, added] = index_.try_emplace(shape.key, shapes_.size());
  if (added) {
    shapes_.push_back(shape);
    return;
  }
  RecordedShape& held = shapes_[at->second];
  // Saturating: a count that would wrap is a count no run reaches.
  held.calls = shape.calls > std::numeric_limits<std::uint64_t>::max() - held.calls
                   ? std::numeric_limits<std::uint64_t>::max()
                   : held.calls + shape.calls;
  held.tier = shape.tier;
  held.distance = shape.distance;
}

std::uint64_t ShapeRecord::total_calls() const {
  std::uint64_t total = 0;
  for (const RecordedShape& s : shapes_) total += s.calls;
  return total;
}

std::string ShapeRecord::format() const {
  std::string text = std::string(kFormat) + " " + std::to_string(kVersion) + "\n" + kColumns + "\n";
  for (const auto& [key, place] : index_) {
    const RecordedShape& s = shapes_[place];
    char distance[32];
    if (std::isfinite(s.distance))
      std::snprintf(distance, sizeof distance, "%.6g", s.distance);
    else
      std::snprintf(distance, sizeof distance, "inf");
    text += std::to_string(key.m) + " " + std::to_string(key.n) + " " + std::to_string(key.k) + " " +
            std::string(to_string(key.dtype)) + " " + std::to_string(key.threads) + " " +
            std::string(to_string(key.layout)) + " " + std::string(to_string(key.trans_a)) + " " +
            std::string(to_string(key.trans_b)) + " " + std::to_string(s.calls) + " " +
            std::string(to_string(s.tier)) + " " + distance + "\n";
  }
  return text;
}

}  // namespace sfc
