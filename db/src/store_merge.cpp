// merge_results: one store into another.
#include "exchange_records.hpp"
#include "sfc/store_exchange.hpp"

namespace sfc {

ExchangeCounts merge_results(TuningStore& into, const TuningStore& from) {
  ExchangeCounts counts;
  // One write transaction on `into`, one snapshot of `from`: a tuner still
  // writing `from` adds nothing half-way.
  into.batch([&] {
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
  });
  return counts;
}

}  // namespace sfc
