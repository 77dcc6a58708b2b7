// TuningTable: the winners of one platform in a small text file that loads
// in milliseconds without SQLite (libsfcconf reads it at start-up).
//
// Format, version 3 (one record per line, fields separated by one space):
//   sfc-table 3
//   platform <field> <value>      every Platform field, then `platform hash <16 hex>`
//                                 (Platform::hash(): the hardware only); the value is
//                                 the rest of the line (it may hold spaces)
//   calibration <gamma> <beta>    GFLOP/s per core, GB/s; 0 = unknown
//   shapes <count>                how many shape lines follow (catches truncation)
//   shape M N K dtype threads layout KL KBF t1 ... t64
// layout is the entry the shape was tuned through: blocked, row or col (version
// 1 files, still read, have no layout field: every shape there is blocked).
// Versions 1 and 2 have no numa_nodes and hash every field; they are read and
// re-keyed (verify_platform_hash in sfc/platform_fields.hpp).
// t_i is the time in seconds (%.6g) of configuration i = (KL-1)*8 + (KBF-1):
// its fastest cold run (sfc/tuner.hpp says why not the mean; tables exported
// before schema version 2 of the database hold means), `nan` where that
// configuration was not measured; KL KBF is the winner. A configuration that
// pruning dropped after its screen shows that one cold run's time, which may be
// noisier than a full measurement (and never makes it the winner).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/knobs.hpp"
#include "sfc/platform.hpp"

namespace sfc {

struct Calibration {
  double gamma_gflops_per_core = 0;  // 0 = unknown
  double beta_gbytes_per_s = 0;      // 0 = unknown

  // Each value 0 (unknown) or in (0, 1e6]: no core or memory comes near a
  // million GFLOP/s or GB/s, and the model divides by them. Every reader and
  // writer of a calibration checks. Throws sfc::Error.
  void check() const;
};

struct TunedShape {
  GemmShape shape;
  DType dtype = DType::f32;
  int threads = 0;
  Layout layout = Layout::blocked;          // the entry it was tuned through
  int k_layers = 0, k_block_factor = 0;     // the winner
  std::array<float, kConfigCount> seconds;  // by Knobs::index(): the fastest run; NaN = not measured

  Knobs winner() const { return {k_layers, k_block_factor}; }
};

struct TuningTable {
  Platform platform;
  Calibration calibration;
  std::vector<TunedShape> shapes;

  // Throws sfc::Error naming the file, the line and the reason.
  static TuningTable load(const std::string& path);
  // Atomic: writes a temporary file next to `path`, then renames it.
  // Throws sfc::Error if the file cannot be written or a field cannot be stored.
  void save(const std::string& path) const;
};

}  // namespace sfc
