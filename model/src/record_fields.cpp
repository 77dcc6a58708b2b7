#include "sfc/record_fields.hpp"

#include <cmath>
#include <initializer_list>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/knobs.hpp"

namespace sfc {
namespace {

// Sizes beyond any GEMM a machine can hold, yet far inside int64 and double.
constexpr std::int64_t kMaxSize = std::int64_t{1} << 40;
constexpr std::int64_t kMaxCount = std::int64_t{1} << 30;

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
  if (!std::isfinite(v) || v < 0 || (!zero_allowed && v == 0))
    throw Error(std::string("must be ") + (zero_allowed ? ">= 0" : "> 0"));
  return v;
}

}  // namespace sfc
