// merge_results: one store into another.
#include "exchange_records.hpp"
#include "sfc/store_exchange.hpp"

namespace sfc {

namespace {

// Adds `from` to `into` inside the caller's batch.
void merge_one(TuningStore& into, const TuningStore& from, ExchangeCounts& counts) {
  {
    from.snapshot([&] {
      for (const Platform& platform : from.platforms()) {
        const std::string hash = platform.hash();
        into.upsert_platform(platform);
        if (const std::optional<std::string> at = from.calibration_time(hash))
          keep_newer_calibration(into, hash, from.calibration(hash), *at);
        const std::vector<Measurement> measurements = from.measurements({hash});
        const std::int64_t added = into.record(hash, measurements);
        counts.measurements += added;
        counts.duplicates += static_cast<std::int64_t>(measurements.size()) - added;
        ++counts.platforms;
      }
    });
  }
}

}  // namespace

ExchangeCounts merge_results(TuningStore& into, const TuningStore& from) {
  return merge_results(into, std::span(&from, 1));
}

ExchangeCounts merge_results(TuningStore& into, std::span<const TuningStore> from) {
  ExchangeCounts counts;
  // One write transaction on `into` for every input, one snapshot of each: a
  // tuner still writing an input adds nothing half-way, and an input refused
  // late (an inconsistent row, a clashing platform) leaves `into` unchanged.
  into.batch([&] {
    for (const TuningStore& store : from) merge_one(into, store, counts);
  });
  return counts;
}

}  // namespace sfc
