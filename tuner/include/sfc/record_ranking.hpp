// RecordRanking: which recorded shapes matter -- each key of a shape record
// (sfc/shape_record.hpp) weighed by its share of the program's estimated GEMM
// time, calls x the analytical model's time for the shape -- for
// `sfc-tune record show` and `sfc-tune tune --from-record`.
//
// The model needs a calibration (gamma, beta) and the L2 size. A tuning table
// of the record's thread count gives its own; without one, this machine's L2
// and kNominalCalibration serve, and only the ranking (not the seconds) means
// much.
#pragma once
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/platform.hpp"
#include "sfc/shape_record.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

struct RankedShape {
  RecordedShape recorded;
  double seconds_per_call = 0;  // the model's, at its best K_layers
  double share = 0;             // of the record's estimated time, 0..1
  bool calibrated = false;      // a tuning table's calibration, not the nominal one
};

// What `tune` is asked for: one shape of one (dtype, threads, layout), the
// record's keys that differ only in transposes summed into it.
struct TuningTarget {
  GemmShape shape;
  DType dtype = DType::f32;
  int threads = 1;
  Layout layout = Layout::blocked;
  std::uint64_t calls = 0;
  double share = 0;
  Tier tier = Tier::default_config;  // the answer its calls got (the most-called key's)
};

struct RecordRanking {
  std::vector<RankedShape> shapes;  // largest share first
  double total_seconds = 0;         // estimated, over every call

  // Keys merged per tuned shape, largest share first (ties: the larger shape).
  std::vector<TuningTarget> tuning_targets() const;
};

// `tables`: tuning tables whose calibration serves their thread count (the
// first calibrated one of a thread count wins); `here` gives the L2 size
// where none does.
RecordRanking rank_record(const ShapeRecord& record, const std::vector<TuningTable>& tables,
                          const Platform& here);

}  // namespace sfc
