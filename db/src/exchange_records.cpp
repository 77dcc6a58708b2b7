#include "exchange_records.hpp"

#include <array>
#include <charconv>
#include <cmath>

#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"

namespace sfc {
namespace {

using json = nlohmann::ordered_json;

constexpr std::array<ExchangeField, 20> kMeasurementFields = {{
    {"m", FieldKind::integer},
    {"n", FieldKind::integer},
    {"k", FieldKind::integer},
    {"dtype", FieldKind::text},
    {"threads", FieldKind::integer},
    {"layout", FieldKind::text},
    {"k_layers", FieldKind::integer},
    {"k_block_factor", FieldKind::integer},
    {"effective_k_layers", FieldKind::integer},
    {"effective_k_block_factor", FieldKind::integer},
    {"bm", FieldKind::integer},
    {"bn", FieldKind::integer},
    {"bk", FieldKind::integer},
    {"warmup", FieldKind::integer},
    {"reps", FieldKind::integer},
    {"mean_s", FieldKind::real},
    {"min_s", FieldKind::real},
    {"stddev_s", FieldKind::real},
    {"screening", FieldKind::integer},
    {"measured_at", FieldKind::text},
}};

constexpr std::array<ExchangeField, 12> kWinnerFields = {{
    {"m", FieldKind::integer},
    {"n", FieldKind::integer},
    {"k", FieldKind::integer},
    {"dtype", FieldKind::text},
    {"threads", FieldKind::integer},
    {"layout", FieldKind::text},
    {"k_layers", FieldKind::integer},
    {"k_block_factor", FieldKind::integer},
    {"mean_s", FieldKind::real},
    {"min_s", FieldKind::real},
    {"reps", FieldKind::integer},
    {"gflops", FieldKind::real},
}};

const json& field(const json& object, std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) throw Error(std::string(key) + ": missing");
  return *it;
}

std::int64_t integer(const json& object, std::string_view key, std::int64_t min, std::int64_t max) {
  const json& value = field(object, key);
  if (!value.is_number_integer()) throw Error(std::string(key) + ": not an integer");
  const auto v = value.get<std::int64_t>();
  if (v < min || v > max)
    throw Error(std::string(key) + ": " + std::to_string(v) + " is outside " + std::to_string(min) + ".." +
                std::to_string(max));
  return v;
}

double seconds(const json& object, std::string_view key, bool zero_allowed) {
  const json& value = field(object, key);
  if (!value.is_number()) throw Error(std::string(key) + ": not a number");
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0 || (!zero_allowed && v == 0))
    throw Error(std::string(key) + ": must be " + (zero_allowed ? ">= 0" : "> 0"));
  return v;
}

std::string text(const json& object, std::string_view key) {
  const json& value = field(object, key);
  if (!value.is_string()) throw Error(std::string(key) + ": not a string");
  return value.get<std::string>();
}

}  // namespace

std::span<const ExchangeField> measurement_fields() { return kMeasurementFields; }
std::span<const ExchangeField> winner_fields() { return kWinnerFields; }

json to_json(const Measurement& m) {
  return {{"m", m.shape.m},
          {"n", m.shape.n},
          {"k", m.shape.k},
          {"dtype", std::string(to_string(m.dtype))},
          {"threads", m.threads},
          {"layout", std::string(to_string(m.layout))},
          {"k_layers", m.k_layers},
          {"k_block_factor", m.k_block_factor},
          {"effective_k_layers", m.effective_k_layers},
          {"effective_k_block_factor", m.effective_k_block_factor},
          {"bm", m.blocks.bm},
          {"bn", m.blocks.bn},
          {"bk", m.blocks.bk},
          {"warmup", m.warmup},
          {"reps", m.reps},
          {"mean_s", m.mean_s},
          {"min_s", m.min_s},
          {"stddev_s", m.stddev_s},
          {"screening", m.screening ? 1 : 0},
          {"measured_at", m.measured_at}};
}

json to_json(const Winner& w) {
  return {{"m", w.shape.m},         {"n", w.shape.n},
          {"k", w.shape.k},         {"dtype", std::string(to_string(w.dtype))},
          {"threads", w.threads},   {"layout", std::string(to_string(w.layout))},
          {"k_layers", w.k_layers}, {"k_block_factor", w.k_block_factor},
          {"mean_s", w.mean_s},     {"min_s", w.min_s},
          {"reps", w.reps},         {"gflops", w.shape.flops() / w.min_s * 1e-9}};
}

json to_json(const Platform& p) {
  json object = {{"hash", p.hash()}};
  for (const PlatformField& f : platform_fields()) {
    if (f.numeric)
      object[std::string(f.name)] = std::stoll(f.get(p));
    else
      object[std::string(f.name)] = f.get(p);
  }
  return object;
}

Measurement measurement_from_json(const json& o) {
  constexpr std::int64_t kDim = std::int64_t{1} << 40, kInt = 1 << 30;
  Measurement m;
  m.shape = {integer(o, "m", 1, kDim), integer(o, "n", 1, kDim), integer(o, "k", 1, kDim)};
  try {
    m.dtype = parse_dtype(text(o, "dtype"));
  } catch (const Error& e) {
    throw Error(std::string("dtype: ") + e.what());
  }
  m.threads = static_cast<int>(integer(o, "threads", 1, kInt));
  // Exports of version 1 have no layout: everything then was timed blocked.
  if (const auto layout = o.find("layout"); layout != o.end() && !layout->is_null()) {
    try {
      m.layout = parse_layout(text(o, "layout"));
    } catch (const Error& e) {
      throw Error(std::string("layout: ") + e.what());
    }
  }
  m.k_layers = static_cast<int>(integer(o, "k_layers", 1, kMaxKLayers));
  m.k_block_factor = static_cast<int>(integer(o, "k_block_factor", 1, kMaxKBlockFactor));
  m.effective_k_layers = static_cast<int>(integer(o, "effective_k_layers", 1, kMaxKLayers));
  m.effective_k_block_factor = static_cast<int>(integer(o, "effective_k_block_factor", 1, kMaxKBlockFactor));
  m.blocks = {static_cast<int>(integer(o, "bm", 1, kInt)), static_cast<int>(integer(o, "bn", 1, kInt)),
              static_cast<int>(integer(o, "bk", 1, kInt))};
  m.warmup = static_cast<int>(integer(o, "warmup", 0, kInt));
  m.reps = static_cast<int>(integer(o, "reps", 1, kInt));
  m.mean_s = seconds(o, "mean_s", false);
  m.min_s = seconds(o, "min_s", false);
  m.stddev_s = seconds(o, "stddev_s", true);
  m.screening = integer(o, "screening", 0, 1) == 1;
  m.measured_at = text(o, "measured_at");
  if (m.measured_at.empty()) throw Error("measured_at: empty");
  return m;
}

Platform platform_from_json(const json& o) {
  Platform p;
  for (const PlatformField& f : platform_fields()) {
    if (f.added_with_hwloc && (!o.contains(f.name) || o[f.name].is_null())) continue;  // an older export: 0
    const json& value = field(o, f.name);
    if (f.numeric != value.is_number_integer())
      throw Error(std::string(f.name) + ": expected " + (f.numeric ? "an integer" : "a string"));
    f.set(p, f.numeric ? value.dump() : value.get<std::string>());
  }
  try {
    verify_platform_hash(p, text(o, "hash"));
  } catch (const Error& e) {
    throw Error(std::string("hash: ") + e.what());
  }
  return p;
}

void keep_newer_calibration(TuningStore& store, const std::string& platform_hash,
                            const Calibration& calibration, const std::string& measured_at) {
  const std::optional<std::string> stored = store.calibration_time(platform_hash);
  if (!stored || *stored < measured_at) store.save_calibration(platform_hash, calibration, measured_at);
}

json cell_to_json(std::string_view name, FieldKind kind, std::string_view cell) {
  if (cell.empty()) return nullptr;
  if (kind == FieldKind::text) return std::string(cell);
  const char* end = cell.data() + cell.size();
  if (kind == FieldKind::integer) {
    std::int64_t value = 0;
    const auto [at, ec] = std::from_chars(cell.data(), end, value);
    if (ec != std::errc{} || at != end)
      throw Error(std::string(name) + ": '" + std::string(cell) + "' is not an integer");
    return value;
  }
  double value = 0;
  const auto [at, ec] = std::from_chars(cell.data(), end, value);
  if (ec != std::errc{} || at != end)
    throw Error(std::string(name) + ": '" + std::string(cell) + "' is not a number");
  return value;
}

std::string json_to_cell(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char text[32];
    const auto [end, ec] =
        std::to_chars(text, text + sizeof text, value.get<double>());  // shortest exact form
    return std::string(text, ec == std::errc{} ? end : text);
  }
  return value.dump();
}

}  // namespace sfc
