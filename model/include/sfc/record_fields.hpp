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
double checked_seconds(const FieldValue& value, bool zero_allowed);

}  // namespace sfc
