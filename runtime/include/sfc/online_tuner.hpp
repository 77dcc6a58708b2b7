// OnlineTuner: tunes an untuned shape while the program runs it, on the
// caller's own operands (PyTorch TunableOp's online mode), for AutoGemm.
//
//   SFC_TUNE=online SFC_TUNE_DB=app.db SFC_TUNE_BUDGET_MS=500 ./my_program
//
// The first calls of a shape whose answer is not `exact` each run one
// candidate configuration instead of the planned one -- every call still
// computes its C, once; no GEMM is added -- and the candidate's time is kept.
// The candidates are a ranked shortlist of at most kShortlist configurations
// (online_shortlist): the policy's answer, the nearest tuned shape's winner
// and the calibrated model's choice where they exist, then the ranked
// search's order of the model's predictions (nominal rates where this machine
// is not calibrated: the order, not the seconds, counts). Each is run
// up to kRounds times, round robin, until the shape's budget of GEMM time is
// spent or every round is done. A candidate keeps its plan across its calls,
// and each turn is two calls: the first settles (what the call before left in
// the caches, the plan's buffers touched for the first time: not counted), the
// second is timed, as the offline tuner does (sfc/measure.hpp, time_rounds).
// Then the fastest (its fastest timed call) is stored
// in the database as full measurements of those configurations (TuningStore:
// WAL, a busy timeout, so several processes can write) and runs from then on,
// in this process, and in the next, which finds the shape `exact` with the
// number of configurations timed (Answer::measured_configs; Step::timed here).
//
// One thread measures a shape at a time: a thread that calls a shape whose
// candidate another thread is running runs the planned configuration, so no
// shape is tuned twice and no call waits for another.
#pragma once
#include <compare>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sfc/analytical_model.hpp"
#include "sfc/config_service.hpp"
#include "sfc/fork_safe_mutex.hpp"
#include "sfc/gemm.hpp"

namespace sfc {

struct OnlineTuning {
  std::string db;               // where winners go (SFC_TUNE_DB; default sfc-tune.db)
  double budget_seconds = 0.5;  // GEMM time per shape (SFC_TUNE_BUDGET_MS; default 500)

  // SFC_TUNE=online: the settings; unset or empty: none. Anything else, or a
  // budget that is not a number > 0, is said on stderr once and tuning stays
  // off: a program must not fail for its tuning settings.
  static std::optional<OnlineTuning> from_environment();
};

// Which shape is being tuned: what a tuning database keys a result by.
// Also what AutoGemm keeps its plans by.
struct TuningKey {
  std::int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::f32;
  int threads = 1;
  Layout layout = Layout::blocked;
  friend auto operator<=>(const TuningKey&, const TuningKey&) = default;

  // The plan of this shape with `knobs`.
  PlanRequest plan_request(const Knobs& knobs) const {
    return {.shape = {m, n, k},
            .dtype = dtype,
            .threads = threads,
            .k_layers = knobs.k_layers,
            .k_block_factor = knobs.k_block_factor,
            .layout = layout};
  }
};

// The candidates online tuning times, at most `count`, best first: `preferred`
// (the predictors' answers) in order, then the ranker's order
// (rank_configs, sfc/config_ranking.hpp, the offline ranked search's) from
// `model`'s predicted time of every configuration; each once.
std::vector<Knobs> online_shortlist(const GemmShape& shape, const ModelPrediction& model,
                                    const std::vector<Knobs>& preferred, std::size_t count);

class OnlineTuner {
 public:
  static constexpr int kRounds = 3;             // timed calls per candidate at most: the fastest counts
  static constexpr int kCallsPerRound = 2;      // a settling call, then the timed one
  static constexpr std::size_t kShortlist = 6;  // candidates timed at most, of kConfigCount

  OnlineTuner(OnlineTuning settings, const ConfigService& service);
  ~OnlineTuner();

  // What the next call of `key`, planned with `planned` (not exact), runs.
  struct Step {
    enum class Kind {
      planned,  // the planned configuration: another thread is measuring, or storing failed
      measure,  // `knobs`, timed, then report()
      winner,   // tuning is over: `knobs` from now on
    } kind = Kind::planned;
    Knobs knobs;
    std::size_t candidate = 0;
    std::shared_ptr<GemmPlan> plan;  // measure: the candidate's plan, kept across its calls
    int timed = 0;                   // winner: how many candidates were timed
  };
  Step next(const TuningKey& key, const Answer& planned);

  // The time of the candidate that next() handed out, on its plan (whose
  // effective knobs and blocks go to the database). When this ends the
  // shape's tuning, the winner is stored before this returns.
  void report(const TuningKey& key, std::size_t candidate, double seconds) noexcept;
  // The candidate next() handed out could not run (the engine threw): the
  // next call measures the next one.
  void skip(const TuningKey& key) noexcept;

  const OnlineTuning& settings() const { return settings_; }

 private:
  struct ShapeTuning;
  std::vector<Knobs> candidates(const TuningKey& key, const Answer& planned) const;
  void store(const TuningKey& key, const ShapeTuning& tuning) noexcept;

  OnlineTuning settings_;
  const ConfigService& service_;
  std::size_t l2_bytes_;  // this machine's, for the nominal model
  ForkSafeMutex mutex_;   // guards shapes_
  std::map<TuningKey, std::unique_ptr<ShapeTuning>> shapes_;
};

}  // namespace sfc
