#include "sfc/record_fields.hpp"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/knobs.hpp"

namespace sfc {
namespace {

// Sizes: what the engine and the predictors take (a record beyond would be
// imported, then refused by every query on the database).
constexpr std::int64_t kMaxSize = kMaxGemmSize;
constexpr std::int64_t kMaxCount = std::int64_t{1} << 30;

// %g: a refused number is quoted short, whatever its size.
std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

int as_int(std::int64_t v) { return static_cast<int>(v); }

const std::string& text_of(const FieldValue& value) { return std::get<std::string>(value); }

DType dtype_of(const FieldValue& value) { return parse_dtype(text_of(value)); }
Layout layout_of(const FieldValue& value) { return parse_layout(text_of(value)); }

constexpr auto I = FieldKind::integer;
constexpr auto R = FieldKind::real;
constexpr auto T = FieldKind::text;

// The fields both records lead with, in this order: the shape, dtype,
// threads, layout and the knobs (the configuration measured, or the winner).
template <class Rec>
std::vector<RecordField<Rec>> key_fields() {
  return {
      {"m", I, false, false, [](const Rec& r) -> FieldValue { return r.shape.m; },
       [](Rec& r, const FieldValue& v) { r.shape.m = checked_integer(v, 1, kMaxSize); }},
      {"n", I, false, false, [](const Rec& r) -> FieldValue { return r.shape.n; },
       [](Rec& r, const FieldValue& v) { r.shape.n = checked_integer(v, 1, kMaxSize); }},
      {"k", I, false, false, [](const Rec& r) -> FieldValue { return r.shape.k; },
       [](Rec& r, const FieldValue& v) { r.shape.k = checked_integer(v, 1, kMaxSize); }},
      {"dtype", T, false, false, [](const Rec& r) -> FieldValue { return std::string(to_string(r.dtype)); },
       [](Rec& r, const FieldValue& v) { r.dtype = dtype_of(v); }},
      {"threads", I, false, false, [](const Rec& r) -> FieldValue { return std::int64_t{r.threads}; },
       [](Rec& r, const FieldValue& v) { r.threads = as_int(checked_integer(v, 1, kMaxCount)); }},
      {"layout", T, true, false, [](const Rec& r) -> FieldValue { return std::string(to_string(r.layout)); },
       [](Rec& r, const FieldValue& v) { r.layout = layout_of(v); }},
      {"k_layers", I, false, false, [](const Rec& r) -> FieldValue { return std::int64_t{r.k_layers}; },
       [](Rec& r, const FieldValue& v) { r.k_layers = as_int(checked_integer(v, 1, kMaxKLayers)); }},
      {"k_block_factor", I, false, false,
       [](const Rec& r) -> FieldValue { return std::int64_t{r.k_block_factor}; },
       [](Rec& r, const FieldValue& v) {
         r.k_block_factor = as_int(checked_integer(v, 1, kMaxKBlockFactor));
       }},
  };
}

template <class Rec>
std::vector<RecordField<Rec>> key_fields_and(std::initializer_list<RecordField<Rec>> rest) {
  std::vector<RecordField<Rec>> fields = key_fields<Rec>();
  fields.insert(fields.end(), rest);
  return fields;
}

using M = Measurement;

std::vector<RecordField<M>> make_measurement_fields() {
  return key_fields_and<M>({
      {"effective_k_layers", I, false, false,
       [](const M& r) -> FieldValue { return std::int64_t{r.effective_k_layers}; },
       [](M& r, const FieldValue& v) { r.effective_k_layers = as_int(checked_integer(v, 1, kMaxKLayers)); }},
      {"effective_k_block_factor", I, false, false,
       [](const M& r) -> FieldValue { return std::int64_t{r.effective_k_block_factor}; },
       [](M& r, const FieldValue& v) {
         r.effective_k_block_factor = as_int(checked_integer(v, 1, kMaxKBlockFactor));
       }},
      {"bm", I, false, false, [](const M& r) -> FieldValue { return std::int64_t{r.blocks.bm}; },
       [](M& r, const FieldValue& v) { r.blocks.bm = as_int(checked_integer(v, 1, kMaxCount)); }},
      {"bn", I, false, false, [](const M& r) -> FieldValue { return std::int64_t{r.blocks.bn}; },
       [](M& r, const FieldValue& v) { r.blocks.bn = as_int(checked_integer(v, 1, kMaxCount)); }},
      {"bk", I, false, false, [](const M& r) -> FieldValue { return std::int64_t{r.blocks.bk}; },
       [](M& r, const FieldValue& v) { r.blocks.bk = as_int(checked_integer(v, 1, kMaxCount)); }},
      {"warmup", I, false, false, [](const M& r) -> FieldValue { return std::int64_t{r.warmup}; },
       [](M& r, const FieldValue& v) { r.warmup = as_int(checked_integer(v, 0, kMaxCount)); }},
      {"reps", I, false, false, [](const M& r) -> FieldValue { return std::int64_t{r.reps}; },
       [](M& r, const FieldValue& v) { r.reps = as_int(checked_integer(v, 1, kMaxCount)); }},
      {"mean_s", R, false, false, [](const M& r) -> FieldValue { return r.mean_s; },
       [](M& r, const FieldValue& v) { r.mean_s = checked_seconds(v, false); }},
      {"min_s", R, false, false, [](const M& r) -> FieldValue { return r.min_s; },
       [](M& r, const FieldValue& v) { r.min_s = checked_seconds(v, false); }},
      {"stddev_s", R, false, false, [](const M& r) -> FieldValue { return r.stddev_s; },
       [](M& r, const FieldValue& v) { r.stddev_s = checked_seconds(v, true); }},
      {"screening", I, false, false,
       [](const M& r) -> FieldValue { return std::int64_t{r.screening ? 1 : 0}; },
       [](M& r, const FieldValue& v) { r.screening = checked_integer(v, 0, 1) == 1; }},
      {"measured_at", T, false, false, [](const M& r) -> FieldValue { return r.measured_at; },
       [](M& r, const FieldValue& v) {
         if (text_of(v).empty()) throw Error("empty");
         check_printable(text_of(v));
         r.measured_at = text_of(v);
       }},
  });
}

using W = Winner;

std::vector<RecordField<W>> make_winner_fields() {
  return key_fields_and<W>({
      {"mean_s", R, false, false, [](const W& r) -> FieldValue { return r.mean_s; },
       [](W& r, const FieldValue& v) { r.mean_s = checked_seconds(v, false); }},
      {"min_s", R, false, false, [](const W& r) -> FieldValue { return r.min_s; },
       [](W& r, const FieldValue& v) { r.min_s = checked_seconds(v, false); }},
      {"reps", I, false, false, [](const W& r) -> FieldValue { return std::int64_t{r.reps}; },
       [](W& r, const FieldValue& v) { r.reps = as_int(checked_integer(v, 1, kMaxCount)); }},
      {"gflops", R, false, true, [](const W& r) -> FieldValue { return r.shape.flops() / r.min_s * 1e-9; },
       [](W&, const FieldValue&) {}},
  });
}

}  // namespace

std::span<const RecordField<Measurement>> measurement_fields() {
  static const std::vector<RecordField<Measurement>> fields = make_measurement_fields();
  return fields;
}

std::span<const RecordField<Winner>> winner_fields() {
  static const std::vector<RecordField<Winner>> fields = make_winner_fields();
  return fields;
}

std::int64_t checked_integer(const FieldValue& value, std::int64_t min, std::int64_t max) {
  const std::int64_t v = std::get<std::int64_t>(value);
  if (v < min || v > max)
    throw Error(std::to_string(v) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
  return v;
}

double checked_seconds(const FieldValue& value, bool zero_allowed) {
  const double v = std::get<double>(value);
  if (!(v >= kMinSeconds && v <= kMaxSeconds) && !(zero_allowed && v == 0))
    throw Error(format_number(v) + " s is outside " + (zero_allowed ? "0 or " : "") + "1e-12..1e6 seconds");
  return v;
}

void check_printable(std::string_view text) {
  // UTF-8 by its byte patterns (RFC 3629: no overlongs, surrogates or code
  // points beyond U+10FFFF), and no C0 controls or DEL.
  if (text.size() > kMaxTextBytes)
    throw Error("is " + std::to_string(text.size()) + " bytes long, more than the " +
                std::to_string(kMaxTextBytes) + " a stored text may have");
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x20 || c == 0x7f) throw Error("holds a control character (byte " + std::to_string(i) + ")");
    std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = length > 0 && i + length <= n;
    std::uint32_t code = length == 1 ? c : length == 2 ? c & 0x1fu : length == 3 ? c & 0x0fu : c & 0x07u;
    for (std::size_t j = 1; valid && j < length; ++j) {
      valid = (s[i + j] & 0xc0) == 0x80;
      code = (code << 6) | (s[i + j] & 0x3fu);
    }
    static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (!valid || code < kSmallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      throw Error("is not valid UTF-8 (byte " + std::to_string(i) + ")");
    i += length;
  }
}

}  // namespace sfc
