// TuningStore's state, shared by the files that implement the store:
// tuning_store.cpp (opening, platforms, recording, reads) and
// store_tables.cpp (the winners with every configuration's time, as tables).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sfc/tuning_store.hpp"
#include "sqlite.hpp"

namespace sfc {

struct TuningStore::Impl {
  sqlite::Database db;
  std::optional<sqlite::Transaction> batch;  // the open batch(), if any

  explicit Impl(sqlite::Database database) : db(std::move(database)) {}

  std::int64_t platform_id(const std::string& hash);
  std::vector<Measurement> measurements(const ResultFilter& filter);
  std::vector<Winner> winners(const ResultFilter& filter);
};

}  // namespace sfc
