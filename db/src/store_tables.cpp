// TuningStore's tables: every winner of a platform with the time of each of
// its 64 configurations (the `config_times` view), what `export --format
// table` writes and the predictors load.
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "sfc/error.hpp"
#include "sfc/tuning_store.hpp"
#include "store_impl.hpp"

namespace sfc {

std::vector<TuningTable> TuningStore::tables() const {
  return snapshot([&] {
    std::vector<TuningTable> out;
    for (const Platform& p : platforms()) out.push_back(table(p.hash()));
    return out;
  });
}

TuningTable TuningStore::table(const std::string& platform_hash) const {
  return snapshot([&] {
    TuningTable table;
    for (const ResultGroup& group : result_groups(platform_hash)) {
      TuningTable part = this->table(platform_hash, group.dtype, group.threads, group.layout);
      table.platform = std::move(part.platform);
      table.calibration = part.calibration;
      table.shapes.insert(table.shapes.end(), part.shapes.begin(), part.shapes.end());
    }
    if (table.shapes.empty()) {  // still name the platform and its calibration
      const std::optional<Platform> platform = this->platform(platform_hash);
      if (!platform) throw Error("database " + path() + " has no platform " + platform_hash);
      table.platform = *platform;
      table.calibration = calibration(platform_hash);
    }
    return table;
  });
}

TuningTable TuningStore::table(const std::string& platform_hash, DType dtype, int threads,
                               Layout layout) const {
  return snapshot([&] {
    const std::optional<Platform> platform = this->platform(platform_hash);
    if (!platform) throw Error("database " + path() + " has no platform " + platform_hash);
    TuningTable table{.platform = *platform, .calibration = calibration(platform_hash), .shapes = {}};

    // Every configuration's time, shape by shape, then the winners on top.
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, TunedShape> shapes;
    sqlite::Statement times = impl_->db.prepare(
        "SELECT s.m, s.n, s.k, c.k_layers, c.k_block_factor, c.min_s FROM config_times AS c "
        "JOIN shapes AS s ON s.id = c.shape_id "
        "WHERE c.platform_id = (SELECT id FROM platforms WHERE hash = ?1) AND c.dtype = ?2 AND c.threads = "
        "?3 "
        "AND c.layout = ?4");
    times.bind(1, platform_hash).bind(2, to_string(dtype)).bind(3, threads).bind(4, to_string(layout));
    while (times.step()) {
      auto [entry, added] = shapes.try_emplace({times.integer(0), times.integer(1), times.integer(2)});
      TunedShape& shape = entry->second;
      if (added) {
        shape.shape = {times.integer(0), times.integer(1), times.integer(2)};
        shape.dtype = dtype;
        shape.threads = threads;
        shape.layout = layout;
        shape.seconds.fill(NAN);
      }
      const std::int64_t kl = times.integer(3), kbf = times.integer(4);
      if (kl < 1 || kl > kMaxKLayers || kbf < 1 || kbf > kMaxKBlockFactor)  // the CHECKs were bypassed
        throw Error("database " + path() + " is inconsistent: a measurement of " + to_string(shape.shape) +
                    " has K_layers " + std::to_string(kl) + ", k_block_factor " + std::to_string(kbf) +
                    " (each must lie in 1..8)");
      shape.seconds[config_index(static_cast<int>(kl), static_cast<int>(kbf))] =
          static_cast<float>(times.real(5));
    }
    // In one snapshot every winner has its times: a winner is only ever
    // written in the transaction that adds its measurements.
    for (const Winner& winner : winners({platform_hash, dtype, threads, layout})) {
      const auto found = shapes.find({winner.shape.m, winner.shape.n, winner.shape.k});
      if (found == shapes.end())
        throw Error("database " + path() + " is inconsistent: a winner of " + to_string(winner.shape) +
                    " has no measurements");
      TunedShape& shape = found->second;
      shape.k_layers = winner.k_layers;
      shape.k_block_factor = winner.k_block_factor;
      table.shapes.push_back(shape);  // winners come ordered by M, N, K
    }
    return table;
  });
}

}  // namespace sfc
