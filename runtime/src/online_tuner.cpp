#include "sfc/online_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "sfc/analytical_model.hpp"
#include "sfc/config_ranking.hpp"
#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/records.hpp"
#include "sfc/settings.hpp"
#include "sfc/tuning_store.hpp"

namespace sfc {

std::optional<OnlineTuning> OnlineTuning::from_environment() {
  if (!sfc::setting_choice("SFC_TUNE", {"online"})) return std::nullopt;
  OnlineTuning settings;
  settings.db = sfc::setting_text("SFC_TUNE_DB").value_or("sfc-tune.db");
  if (const auto ms = sfc::setting_number("SFC_TUNE_BUDGET_MS", 0, std::numeric_limits<double>::max(), true))
    settings.budget_seconds = *ms / 1e3;
  return settings;
}

// One shape's tuning: its candidates, their runs, whose turn it is.
struct OnlineTuner::ShapeTuning {
  std::vector<Knobs> candidates;
  struct Runs {
    int count = 0;
    double sum = 0, min = std::numeric_limits<double>::infinity();
    Knobs effective;
    BlockSizes blocks;
  };
  std::vector<Runs> runs;
  std::vector<std::shared_ptr<GemmPlan>> plans;  // by candidate: built on first use, freed with the winner
  std::size_t next = 0;                          // the candidate of the next measurement (round robin)
  int calls = 0;           // of this turn of candidate `next` (OnlineTuner::kCallsPerRound)
  double spent = 0;        // seconds of GEMM time measured
  bool measuring = false;  // a thread is running a candidate now
  std::optional<Knobs> winner;
  int timed = 0;  // candidates with a timed run, once there is a winner
};

OnlineTuner::OnlineTuner(OnlineTuning settings, const ConfigService& service)
    : settings_(std::move(settings)), service_(service), l2_bytes_(detect_platform().l2_bytes) {}

OnlineTuner::~OnlineTuner() = default;

std::vector<Knobs> online_shortlist(const GemmShape& shape, const ModelPrediction& model,
                                    const std::vector<Knobs>& preferred, std::size_t count) {
  std::vector<Knobs> list;
  const auto add = [&](const Knobs& knobs) {
    if (list.size() < count && knobs.valid() && std::find(list.begin(), list.end(), knobs) == list.end())
      list.push_back(knobs);
  };
  for (const Knobs& knobs : preferred) add(knobs);
  for (const Knobs& knobs : rank_configs(shape, &model, {}).order) add(knobs);
  return list;
}

std::vector<Knobs> OnlineTuner::candidates(const TuningKey& key, const Answer& planned) const {
  const GemmShape shape{key.m, key.n, key.k};
  std::vector<Knobs> preferred = {planned.knobs};
  // Each predictor that can answer: those that cannot (no tuned neighbour,
  // no calibration) throw, and simply offer nothing.
  for (const Predictor p : {Predictor::nearest, Predictor::model}) try {
      preferred.push_back(service_.predictor().predict(p, shape, key.dtype, key.threads, key.layout));
    } catch (const Error&) {}
  // The ranking: the model with nominal rates ranks K_layers wherever this
  // machine is not calibrated (this machine's L2 sizes the k_block_factor).
  ModelPrediction model;
  model.seconds.fill(std::numeric_limits<double>::infinity());
  // No model: every configuration ties, and the ranker's order is (1, 1), (1, 2), ...
  model.config_seconds.fill(1.0);
  try {
    model =
        AnalyticalModel(kNominalCalibration, l2_bytes_).predict(shape, key.dtype, key.threads, key.layout);
  } catch (const Error&) {
    model.knobs = {1, 1};
  }
  return online_shortlist(shape, model, preferred, kShortlist);
}

OnlineTuner::Step OnlineTuner::next(const TuningKey& key, const Answer& planned) {
  std::unique_lock lock(mutex_);
  std::unique_ptr<ShapeTuning>& slot = shapes_[key];
  if (!slot) {
    slot = std::make_unique<ShapeTuning>();
    slot->candidates = candidates(key, planned);
    slot->runs.resize(slot->candidates.size());
    slot->plans.resize(slot->candidates.size());
  }
  ShapeTuning& t = *slot;
  if (t.winner) return {Step::Kind::winner, *t.winner, 0, nullptr, t.timed};
  if (t.measuring) return {Step::Kind::planned, planned.knobs, 0, nullptr, 0};
  t.measuring = true;  // this shape's candidates are this thread's until report() or skip()
  const std::size_t candidate = t.next;
  if (!t.plans[candidate]) {
    const PlanRequest request = key.plan_request(t.candidates[candidate]);
    lock.unlock();  // other shapes go on while this plan is built
    std::shared_ptr<GemmPlan> plan;
    try {
      plan = std::make_shared<GemmPlan>(request);
    } catch (...) {  // the call fails; the next one measures the next candidate
      lock.lock();
      t.next = (t.next + 1) % t.candidates.size();
      t.measuring = false;
      throw;
    }
    lock.lock();
    t.plans[candidate] = std::move(plan);
  }
  return {Step::Kind::measure, t.candidates[candidate], candidate, t.plans[candidate], 0};
}

void OnlineTuner::report(const TuningKey& key, std::size_t candidate, double seconds) noexcept {
  std::unique_lock lock(mutex_);
  ShapeTuning& t = *shapes_.at(key);
  t.spent += seconds;
  if (++t.calls < kCallsPerRound) {  // settled: the timed call comes next
    t.measuring = false;
    return;
  }
  t.calls = 0;
  const GemmPlan& plan = *t.plans[candidate];
  ShapeTuning::Runs& r = t.runs[candidate];
  ++r.count;
  r.sum += seconds;
  r.min = std::min(r.min, seconds);
  r.effective = {plan.k_layers(), plan.k_block_factor()};
  r.blocks = plan.blocks();
  t.next = (candidate + 1) % t.candidates.size();
  const bool rounds_done = t.next == 0 && r.count >= kRounds;
  if (!rounds_done && t.spent < settings_.budget_seconds) {
    t.measuring = false;
    return;
  }
  // Done: the fastest run of any candidate wins (the tuner's rule, sfc/tuner.hpp).
  std::size_t best = candidate;
  for (std::size_t i = 0; i < t.runs.size(); ++i)
    if (t.runs[i].count > 0 && t.runs[i].min < t.runs[best].min) best = i;
  // Stored before the winner is published, so a thread seeing it finds the database written.
  lock.unlock();
  store(key, t);
  lock.lock();
  t.winner = t.candidates[best];
  t.timed = int(std::count_if(t.runs.begin(), t.runs.end(),
                              [](const ShapeTuning::Runs& runs) { return runs.count > 0; }));
  t.plans.clear();  // a caller still running one holds it (shared_ptr)
  t.measuring = false;
}

void OnlineTuner::skip(const TuningKey& key) noexcept {
  const std::lock_guard lock(mutex_);
  ShapeTuning& t = *shapes_.at(key);
  t.next = (t.next + 1) % t.candidates.size();
  t.calls = 0;
  t.measuring = false;
}

void OnlineTuner::store(const TuningKey& key, const ShapeTuning& t) noexcept {
  try {
    const Platform platform = detect_platform(key.threads);
    std::vector<Measurement> measured;
    const std::string now = utc_timestamp();
    for (std::size_t i = 0; i < t.candidates.size(); ++i) {
      const ShapeTuning::Runs& r = t.runs[i];
      if (r.count == 0) continue;
      measured.push_back({.shape = {key.m, key.n, key.k},
                          .dtype = key.dtype,
                          .threads = key.threads,
                          .layout = key.layout,
                          .k_layers = t.candidates[i].k_layers,
                          .k_block_factor = t.candidates[i].k_block_factor,
                          .effective_k_layers = r.effective.k_layers,
                          .effective_k_block_factor = r.effective.k_block_factor,
                          .blocks = r.blocks,
                          .warmup = 0,
                          .reps = r.count,
                          .mean_s = r.sum / r.count,
                          .min_s = r.min,
                          .stddev_s = 0,
                          .screening = false,
                          .measured_at = now});
    }
    TuningStore db(settings_.db, TuningStore::Mode::create);
    db.upsert_platform(platform);
    db.record(platform.hash(), measured);
  } catch (const std::exception& e) {
    // The winner still serves this process; the next one tunes the shape again.
    std::fprintf(stderr, "sfc-tune: online tuning of %lldx%lldx%lld: cannot store in %s: %s\n",
                 static_cast<long long>(key.m), static_cast<long long>(key.n), static_cast<long long>(key.k),
                 settings_.db.c_str(), e.what());
  }
}

}  // namespace sfc
