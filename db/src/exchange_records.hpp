// Measurements, winners and platforms as JSON objects, walking the field
// tables of sfc/record_fields.hpp and sfc/platform_fields.hpp: the JSON format
// has a key per field and the CSV format a column per key, in that order.
#pragma once
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>

#include "sfc/platform.hpp"
#include "sfc/record_fields.hpp"
#include "sfc/tuning_store.hpp"

namespace sfc {

nlohmann::ordered_json to_json(const Measurement& m);
nlohmann::ordered_json to_json(const Winner& w);
nlohmann::ordered_json to_json(const Platform& p);  // platform_fields() plus "hash"

// Validate as they read; throw sfc::Error("<key>: <reason>").
Measurement measurement_from_json(const nlohmann::ordered_json& object);
// Also checks that "hash" matches the fields.
Platform platform_from_json(const nlohmann::ordered_json& object);

// Stores `calibration` for the platform unless the store holds a newer one
// (time stamps compare as text: ISO-8601 UTC sorts by time).
void keep_newer_calibration(TuningStore& store, const std::string& platform_hash,
                            const Calibration& calibration, const std::string& measured_at);

// A CSV cell as a JSON value of `kind` (empty text: null); throws sfc::Error.
nlohmann::ordered_json cell_to_json(std::string_view name, FieldKind kind, std::string_view text);
// A JSON value as a CSV cell: numbers as their shortest exact text, null as "".
std::string json_to_cell(const nlohmann::ordered_json& value);

}  // namespace sfc
