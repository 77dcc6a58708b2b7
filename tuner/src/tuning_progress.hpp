// What a tuning session shows on stderr: a bar redrawn in place on a
// terminal (shapes done of total, current shape and configuration, the runs
// of the timing in progress, best so far, ETA), one log line per finished
// shape otherwise, nothing when quiet. Once per session, a line says that each
// shape first fills its cold inputs (the cold footprint), which takes seconds
// even for a tiny shape.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"
#include "sfc/tuner.hpp"
#include "sfc/tuning_session.hpp"
#include "sfc/tuning_store.hpp"

namespace sfc {

class TuningProgress {
 public:
  // `pending` are the shapes this run will tune, in order.
  TuningProgress(ProgressStyle style, std::size_t grid_size, std::size_t already_done,
                 const std::vector<GemmShape>& pending);
  ~TuningProgress();
  // The run observer holds `this`.
  TuningProgress(const TuningProgress&) = delete;
  TuningProgress& operator=(const TuningProgress&) = delete;

  // One start_shape() ... finish_shape() per pending shape, in any order,
  // or skip_shape() for one another tuner completed meanwhile.
  void start_shape(const GemmShape& shape);
  void skip_shape(const GemmShape& shape);
  void step(const TuneStep& step);
  void finish_shape(const std::optional<Winner>& winner);
  void clear();  // takes the bar off the terminal before other output

 private:
  using Clock = std::chrono::steady_clock;
  double eta_seconds() const;  // < 0: unknown yet
  void draw(bool force);

  bool enabled_, terminal_;
  std::size_t grid_size_, done_;
  std::vector<GemmShape> pending_;
  std::size_t current_ = 0;  // index into pending_: those before it are done
  // Moves `shape` to pending_[current_] (the shapes yet to do keep their ETA).
  void bring_forward(const GemmShape& shape);
  TuneStep last_step_;
  // The runs of the timing in progress (configurations are timed in rounds,
  // so the configuration count stays put for most of a shape).
  RunProgress runs_;
  RunObserver previous_observer_;  // restored by the destructor
  Clock::time_point shape_start_, last_draw_;
  std::vector<std::pair<double, double>> finished_;  // (GFLOP, seconds) of shapes tuned by this run
  bool drawn_ = false;
};

}  // namespace sfc
