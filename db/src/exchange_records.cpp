#include "exchange_records.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <variant>

#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"

namespace sfc {
namespace {

using json = nlohmann::ordered_json;

const json& field(const json& object, std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) throw Error(std::string(key) + ": missing");
  return *it;
}

std::string text(const json& object, std::string_view key) {
  const json& value = field(object, key);
  if (!value.is_string()) throw Error(std::string(key) + ": not a string");
  return value.get<std::string>();
}

template <class Record>
json record_to_json(const Record& record, std::span<const RecordField<Record>> fields) {
  json object = json::object();
  for (const RecordField<Record>& f : fields)
    std::visit([&](const auto& value) { object[std::string(f.name)] = value; }, f.get(record));
  return object;
}

// Reads every field that is not derived, checking its JSON type, then its value.
template <class Record>
Record record_from_json(const json& object, std::span<const RecordField<Record>> fields) {
  Record record;
  for (const RecordField<Record>& f : fields) {
    if (f.derived) continue;
    const auto it = object.find(f.name);
    if (f.optional && (it == object.end() || it->is_null())) continue;
    const json& value = field(object, f.name);
    const std::string name(f.name);
    FieldValue v;
    switch (f.kind) {
      case FieldKind::integer:
        if (!value.is_number_integer()) throw Error(name + ": not an integer");
        v = value.get<std::int64_t>();
        break;
      case FieldKind::real:
        if (!value.is_number()) throw Error(name + ": not a number");
        v = value.get<double>();
        break;
      case FieldKind::text:
        if (!value.is_string()) throw Error(name + ": not a string");
        v = value.get<std::string>();
        break;
    }
    try {
      f.set(record, v);
    } catch (const Error& e) {
      throw Error(name + ": " + e.what());
    }
  }
  return record;
}

}  // namespace

json to_json(const Measurement& m) { return record_to_json(m, measurement_fields()); }

json to_json(const Winner& w) { return record_to_json(w, winner_fields()); }

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

Measurement measurement_from_json(const json& o) { return record_from_json(o, measurement_fields()); }

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
  // Text may be empty (a platform field can be); the field's own check
  // decides. An empty number is a missing one.
  if (kind == FieldKind::text) return std::string(cell);
  if (cell.empty()) return nullptr;
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
