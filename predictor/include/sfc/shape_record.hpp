// ShapeRecord: the GEMM shapes a program ran, with how often -- the text file
// that SFC_RECORD (or sfcconf_record_open) fills at run time (ShapeRecorder,
// sfc/shape_recorder.hpp) and that `sfc-tune record show` and
// `sfc-tune tune --from-record` read.
//
// The file is for people as much as for programs: a header line naming the
// format and its version, comments, then one line per recorded key:
//
//   sfc-shape-record 1
//   # m n k dtype threads layout trans_a trans_b calls tier distance
//   512 2048 2048 f32 2 row N T 1200 nearest 0.415
//
// trans_a/trans_b are N, T, or ? where the caller did not say (a libsfcconf
// query); tier and distance are the answer the shape got (the latest flush's).
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/gemm.hpp"
#include "sfc/predictor.hpp"

namespace sfc {

// A transpose as recorded: a libsfcconf query does not know it.
enum class RecordTranspose : std::uint8_t { none, transpose, unknown };
std::string_view to_string(RecordTranspose transpose);  // "N", "T", "?"

// What one line counts calls of.
struct RecordKey {
  std::int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::f32;
  int threads = 1;
  Layout layout = Layout::blocked;
  RecordTranspose trans_a = RecordTranspose::unknown, trans_b = RecordTranspose::unknown;

  GemmShape shape() const { return {m, n, k}; }
  friend auto operator<=>(const RecordKey&, const RecordKey&) = default;
};

// A file that is not a shape record this build reads (as opposed to one that
// cannot be read at all, a plain sfc::Error).
class RecordFormatError : public Error {
 public:
  using Error::Error;
};

struct RecordedShape {
  RecordKey key;
  std::uint64_t calls = 0;
  Tier tier = Tier::default_config;
  double distance = 0;  // +infinity: no tuned shape of its kind
};

class ShapeRecord {
 public:
  static constexpr std::string_view kFormat = "sfc-shape-record";
  static constexpr int kVersion = 1;

  // Throws RecordFormatError naming `name`, the line and the reason for anything that
  // is not a record of this format (another header, a version of the future,
  // a missing or extra field, a size, count or name out of range).
  static ShapeRecord parse(std::string_view text, const std::string& name);
  // parse() of the file's bytes; sfc::Error when it cannot be read.
  static ShapeRecord load(const std::string& path);

  // Adds `shape`'s calls to its key's (a new key is appended, in order); the
  // tier and distance become `shape`'s, the newer answer.
  void add(const RecordedShape& shape);

  // The text of the file: header, the column comment, keys in sorted order.
  std::string format() const;

  const std::vector<RecordedShape>& shapes() const { return shapes_; }
  std::uint64_t total_calls() const;

 private:
  std::vector<RecordedShape> shapes_;
  std::map<RecordKey, std::size_t> index_;  // key -> its place in shapes_, so merging stays n log n
};

// "512x2048x2048 f32 t2 row NT": one key in one phrase, for messages.
std::string describe(const RecordKey& key);

}  // namespace sfc
