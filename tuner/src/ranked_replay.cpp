#include "sfc/ranked_replay.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "sfc/error.hpp"
#include "sfc/ranked_search.hpp"
#include "sfc/regret.hpp"
#include "sfc/tuner.hpp"

namespace sfc {
namespace {

// The runs of one shape, drawn from its stored times.
class RunDraws {
 public:
  RunDraws(const TunedShape& shape, const ReplayOptions& o)
      : shape_(shape),
        options_(o),
        // One stream per shape, so a shape's draws do not depend on the order.
        random_(o.seed ^ (std::uint64_t(shape.shape.m) * 0x9E3779B97F4A7C15ULL) ^
                (std::uint64_t(shape.shape.n) * 0xC2B2AE3D27D4EB4FULL) ^
                (std::uint64_t(shape.shape.k) * 0x165667B19E3779F9ULL)) {}

  double stored(Knobs c) const { return double(shape_.seconds[std::size_t(c.index())]); }

  double run(Knobs c) {
    const double excess =
        std::uniform_real_distribution<double>(0, 1)(random_) < options_.outlier_rate
            ? std::uniform_real_distribution<double>(0.2, 1.0)(random_)
            : (options_.noise > 0 ? std::exponential_distribution<double>(1 / options_.noise)(random_) : 0.0);
    return stored(c) * (1 + excess);
  }

  // `warmup` untimed runs, then timed ones: `reps`, or with `screen_seconds`
  // > 0 at least `min_reps`, more up to `reps` while they took less.
  RaceRuns time(Knobs c, int warmup, int min_reps, int reps, double screen_seconds) {
    RaceRuns r;
    run_seconds += warmup * stored(c);
    double sum = 0, sum2 = 0, spent = 0;
    r.min_s = INFINITY;
    while (r.reps < reps && (screen_seconds <= 0 || r.reps < min_reps || spent < screen_seconds)) {
      const double t = run(c);
      ++r.reps;
      spent += t;
      sum += t;
      sum2 += t * t;
      r.min_s = std::min(r.min_s, t);
    }
    run_seconds += spent;
    runs += r.reps;
    r.mean_s = sum / r.reps;
    r.stddev_s = r.reps > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * sum / r.reps) / (r.reps - 1))) : 0.0;
    return r;
  }

  double run_seconds = 0;
  long long runs = 0;

 private:
  const TunedShape& shape_;
  const ReplayOptions& options_;
  std::mt19937_64 random_;
};

}  // namespace

ReplayReport replay_ranked(const std::vector<TunedShape>& tuned, const std::vector<TunedShape>& prior,
                           const std::optional<AnalyticalModel>& model, const ReplayOptions& options) {
  if (tuned.empty()) throw Error("no tuned shapes to replay");
  check(options.race);
  if (!(options.noise >= 0) || !(options.outlier_rate >= 0 && options.outlier_rate <= 1))
    throw Error("the replay's noise must be >= 0 and its outlier rate in 0..1");
  if (options.warmup < 0 || options.reps < 1)
    throw Error("the replayed exhaustive tuning needs warm-up >= 0 and reps >= 1");
  for (const TunedShape& t : tuned)
    for (float s : t.seconds)
      if (!(s > 0))
        throw Error("shape " + to_string(t.shape) +
                    " lacks a configuration's measurement: replay needs exhaustively tuned shapes");

  RankingContext context(options.use_model ? model : std::nullopt, options.ranking);
  for (const TunedShape& p : prior) context.add(p.shape, seconds_of(p), true);
  std::vector<GemmShape> shapes;
  for (const TunedShape& t : tuned) shapes.push_back(t.shape);
  const std::vector<GemmShape> known = context.shapes(false);
  const std::vector<GemmShape> order = spread_order(shapes, known);

  ReplayReport report;
  std::vector<double> regrets, exhaustive_regrets;
  for (const GemmShape& shape : order) {
    const TunedShape& t = *std::find_if(tuned.begin(), tuned.end(),
                                        [&](const TunedShape& s) { return same_shape(s.shape, shape); });
    const auto effective = [&](Knobs c) {
      return effective_config(t.shape, t.dtype, t.threads, t.layout, c);
    };
    ReplayedShape r;
    r.shape = shape;
    r.ranking = context.rank(shape, t.dtype, t.threads, t.layout);
    for (int i = 0; i < kConfigCount; ++i)
      if (t.seconds[std::size_t(i)] < t.seconds[std::size_t(r.best.index())]) r.best = Knobs::at(i);
    // Configurations that run as the best's plan are as good as it.
    r.best_rank =
        int(std::find_if(r.ranking.order.begin(), r.ranking.order.end(),
                         [&](Knobs c) {
                           return t.seconds[std::size_t(c.index())] == t.seconds[std::size_t(r.best.index())];
                         }) -
            r.ranking.order.begin());

    // The ranked search, and what it leaves the later shapes to learn from.
    RunDraws draws(t, options);
    std::array<double, kConfigCount> full, screen;
    full.fill(NAN);
    screen.fill(NAN);
    const RaceTimer timer = [&](const std::vector<Knobs>& configs, bool screening) {
      std::vector<RaceRuns> out;
      for (Knobs c : configs) {
        const Knobs plan = effective(c);
        const auto same =
            std::find_if(configs.begin(), configs.end(), [&](Knobs o) { return effective(o) == plan; });
        // A plan is timed once per call, as the Tuner does (clamped requests
        // share it), after one untimed run (the Tuner's race warms each plan once).
        const int reps = options.race.round_reps;
        RaceRuns runs = *same != c ? out[std::size_t(same - configs.begin())]
                        : screening
                            ? draws.time(c, kScreenWarmup, kScreenMinReps, kScreenReps, kScreenSeconds)
                            : draws.time(c, std::min(options.warmup, 1), reps, reps, 0);
        runs.effective = plan;
        double& seen = (screening ? screen : full)[std::size_t(c.index())];
        seen = std::isnan(seen) ? runs.min_s : std::min(seen, runs.min_s);
        out.push_back(runs);
      }
      return std::optional<std::vector<RaceRuns>>(std::move(out));
    };
    r.race = race(r.ranking.shortlist(~std::uint64_t{0}, effective), timer, options.race, ~std::uint64_t{0},
                  effective);
    r.regret = std::max(0.0, draws.stored(r.race.winner) / draws.stored(r.best) - 1);
    r.run_seconds = draws.run_seconds;
    for (int i = 0; i < kConfigCount; ++i)
      if (std::isnan(full[std::size_t(i)])) full[std::size_t(i)] = screen[std::size_t(i)];
    context.add(shape, full);

    // The exhaustive tuning on the same distribution.
    RunDraws again(t, options);
    std::array<double, kConfigCount> seconds;
    for (int i = 0; i < kConfigCount; ++i) {
      const Knobs c = Knobs::at(i), plan = effective(c);
      seconds[std::size_t(i)] = plan == c ? again.time(c, options.warmup, options.reps, options.reps, 0).min_s
                                          : seconds[std::size_t(plan.index())];
    }
    r.exhaustive_winner = Knobs::at(int(std::min_element(seconds.begin(), seconds.end()) - seconds.begin()));
    r.exhaustive_regret = std::max(0.0, draws.stored(r.exhaustive_winner) / draws.stored(r.best) - 1);
    r.exhaustive_runs = again.runs;
    r.exhaustive_run_seconds = again.run_seconds;

    regrets.push_back(r.regret);
    exhaustive_regrets.push_back(r.exhaustive_regret);
    report.mean_screened += r.race.screened;
    report.mean_fully_timed += r.race.fully_timed;
    report.mean_shortlist += double(r.ranking.shortlist(~std::uint64_t{0}, effective).size());
    report.runs += r.race.runs;
    report.exhaustive_runs += r.exhaustive_runs;
    report.run_seconds += r.run_seconds;
    report.exhaustive_run_seconds += r.exhaustive_run_seconds;
    report.shapes.push_back(std::move(r));
  }
  const double n = double(report.shapes.size());
  report.mean_screened /= n;
  report.mean_fully_timed /= n;
  report.mean_shortlist /= n;
  report.regret = summarise(regrets);
  report.exhaustive_regret = summarise(exhaustive_regrets);
  return report;
}

}  // namespace sfc
