// The fields of the records (Measurement, Winner) in the one order every
// format uses -- the JSON keys and CSV columns of an export, the columns the
// store selects and inserts -- each with its kind and the checks a reader
// applies. A field added to a record is added here once (as platform_fields()
// does for Platform).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "sfc/records.hpp"

namespace sfc {

enum class FieldKind { integer, real, text };
using FieldValue = std::variant<std::int64_t, double, std::string>;

template <class Record>
struct RecordField {
  std::string_view name;  // JSON key, CSV column, and the SQL column (m, n, k: of the shapes table)
  FieldKind kind;
  // Absent from exports of version 1 (layout: everything was blocked then):
  // a reader keeps the record's default.
  bool optional;
  // Derived from the others (Winner's gflops): written, never read back.
  bool derived;
  FieldValue (*get)(const Record&);
  // Sets the field from a value of its kind after checking it; throws
  // sfc::Error with the reason (without the name, which the caller adds).
  void (*set)(Record&, const FieldValue&);
};

std::span<const RecordField<Measurement>> measurement_fields();
std::span<const RecordField<Winner>> winner_fields();

// "1 is outside 2..8"-style checks shared by the setters and other readers.
std::int64_t checked_integer(const FieldValue& value, std::int64_t min, std::int64_t max);

// Times a record may hold, in seconds: no GEMM runs in under a picosecond or
// for days, and the bounds keep every time a normal float, which is what a
// tuning table stores (1e308 would become inf there, 1e-320 zero).
inline constexpr double kMinSeconds = 1e-12, kMaxSeconds = 1e6;
// A time in kMinSeconds..kMaxSeconds, or 0 when `zero_allowed` (a deviation).
double checked_seconds(const FieldValue& value, bool zero_allowed);

// Text a record stores (platform fields, timestamps) must be valid UTF-8
// without control characters: JSON needs the one, line-based formats (the
// table, CSV read by people) the other, and at most kMaxTextBytes long (a CPU
// model or compiler name is far shorter; a crafted megabyte would bloat every
// table and export made from it). Throws sfc::Error.
inline constexpr std::size_t kMaxTextBytes = 1024;
void check_printable(std::string_view text);

}  // namespace sfc
