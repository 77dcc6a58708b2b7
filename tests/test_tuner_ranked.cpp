// The ranked search: the ranker on synthetic sources, the race on a fake
// timer, the replay on a synthetic table, and a ranked database tuned on tiny
// shapes with the real engine (logic only: no timing assertions).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sfc/config_ranking.hpp"
#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/racing.hpp"
#include "sfc/ranked_replay.hpp"
#include "sfc/ranked_search.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/tuner.hpp"
#include "sfc/tuning_session.hpp"
#include "sfc/tuning_store.hpp"
#include "support.hpp"

using sfc::Knobs;

namespace {

// Seconds that grow with the grid distance from `best`.
std::array<double, sfc::kConfigCount> bowl(Knobs best, double base = 1e-3) {
  std::array<double, sfc::kConfigCount> s;
  for (int i = 0; i < sfc::kConfigCount; ++i) {
    const Knobs k = Knobs::at(i);
    s[std::size_t(i)] = base * (1 + 0.1 * std::abs(k.k_layers - best.k_layers) +
                                0.05 * std::abs(k.k_block_factor - best.k_block_factor));
  }
  return s;
}

sfc::ModelPrediction model_with(Knobs best) {
  sfc::ModelPrediction p;
  p.config_seconds = bowl(best);
  p.knobs = best;
  return p;
}

}  // namespace

TEST_CASE("ranking: the model's order, ties to the smaller configuration, and the leader's grid neighbours") {
  const sfc::ModelPrediction model = model_with({3, 2});
  const sfc::ConfigRanking r = sfc::rank_configs({512, 512, 512}, &model, {});
  CHECK(r.order[0] == Knobs{3, 2});
  CHECK(r.order[1] == Knobs{3, 1});  // ties with (3, 3): the smaller first
  CHECK(r.order[2] == Knobs{3, 3});
  CHECK(r.sources == 1);
  CHECK(r.score[Knobs{3, 2}.index()] == doctest::Approx(0));
  // Every configuration once.
  CHECK(std::set<Knobs>(r.order.begin(), r.order.end()).size() == 64);

  const std::vector<Knobs> list = r.shortlist();
  REQUIRE(int(list.size()) >= r.length);
  CHECK(std::equal(list.begin(), list.begin() + r.length, r.order.begin()));
  for (Knobs n : {Knobs{2, 2}, Knobs{4, 2}, Knobs{3, 1}, Knobs{3, 3}})
    CHECK(std::ranges::find(list, n) != list.end());

  // Only allowed configurations; clamped ones that run as one plan count once.
  const std::uint64_t only_layer_one = 0xFF;  // (1, 1) .. (1, 8)
  for (Knobs k : r.shortlist(only_layer_one)) CHECK(k.k_layers == 1);
  const auto clamp_rounds = [](Knobs k) { return Knobs{k.k_layers, std::min(k.k_block_factor, 2)}; };
  std::set<Knobs> plans;
  for (Knobs k : r.shortlist(~std::uint64_t{0}, clamp_rounds)) CHECK(plans.insert(clamp_rounds(k)).second);
}

TEST_CASE("ranking: agreeing near neighbours raise the confidence and shorten the list") {
  const sfc::GemmShape shape{1024, 1024, 1024};
  const sfc::ModelPrediction model = model_with({2, 4});
  const sfc::ConfigRanking alone = sfc::rank_configs(shape, &model, {});
  std::vector<sfc::RankingNeighbour> near{{.shape = {1024, 1024, 2048}, .seconds = bowl({2, 4})},
                                          {.shape = {1024, 2048, 1024}, .seconds = bowl({2, 4})}};
  const sfc::ConfigRanking agreed = sfc::rank_configs(shape, &model, near);
  CHECK(agreed.confidence > alone.confidence);
  CHECK(agreed.length <= alone.length);
  CHECK(agreed.order[0] == Knobs{2, 4});

  // Neighbours that disagree with the model lower it, and the nearer source wins the top.
  std::vector<sfc::RankingNeighbour> other{{.shape = {1024, 1024, 1024}, .seconds = bowl({6, 1})},
                                           {.shape = {1024, 1024, 1100}, .seconds = bowl({6, 1})}};
  const sfc::ConfigRanking torn = sfc::rank_configs(shape, &model, other);
  CHECK(torn.order[0] == Knobs{6, 1});

  // Nothing known: every configuration ties, no confidence, the longest list.
  const sfc::ConfigRanking blind = sfc::rank_configs(shape, nullptr, {});
  CHECK(blind.order[0] == Knobs{1, 1});
  CHECK(blind.confidence == 0);
  CHECK(blind.length == sfc::RankingOptions{}.max_shortlist);
  CHECK_THROWS_AS(sfc::rank_configs(shape, nullptr, {}, {.min_shortlist = 5, .max_shortlist = 4}),
                  sfc::Error);
  CHECK_THROWS_AS(sfc::rank_configs({0, 1, 1}, nullptr, {}), sfc::Error);
}

TEST_CASE("ranking: a neighbour's unmeasured configurations count at its median measured one") {
  auto partial = bowl({1, 1});
  for (int i = 8; i < sfc::kConfigCount; ++i) partial[std::size_t(i)] = NAN;  // only K_layers 1 timed
  const std::vector<sfc::RankingNeighbour> near{{.shape = {256, 256, 256}, .seconds = partial}};
  const sfc::ConfigRanking r = sfc::rank_configs({256, 256, 256}, nullptr, near);
  CHECK(r.order[0] == Knobs{1, 1});
  CHECK(r.score[Knobs{8, 8}.index()] == doctest::Approx(r.score[Knobs{1, 5}.index()]));
  CHECK(r.score[Knobs{8, 8}.index()] < r.score[Knobs{1, 8}.index()]);
}

TEST_CASE("ranking: another machine's neighbour weighs less and adds no confidence") {
  const sfc::GemmShape shape{512, 512, 512};
  const std::vector<sfc::RankingNeighbour> own{{.shape = shape, .seconds = bowl({2, 2})},
                                               {.shape = {512, 512, 600}, .seconds = bowl({5, 5})}};
  std::vector<sfc::RankingNeighbour> foreign = own;
  foreign[1].foreign = true;
  CHECK(sfc::rank_configs(shape, nullptr, own).order[0] == Knobs{2, 2});
  // Both at their distances: the foreign one's weight shrinks, so (2, 2) leads by more.
  CHECK(sfc::rank_configs(shape, nullptr, foreign).score[Knobs{5, 5}.index()] >
        sfc::rank_configs(shape, nullptr, own).score[Knobs{5, 5}.index()]);
  const std::vector<sfc::RankingNeighbour> only_foreign{
      {.shape = shape, .seconds = bowl({2, 2}), .foreign = true}};
  const std::vector<sfc::RankingNeighbour> only_own{{.shape = shape, .seconds = bowl({2, 2})}};
  CHECK(sfc::rank_configs(shape, nullptr, only_foreign).confidence <
        sfc::rank_configs(shape, nullptr, only_own).confidence);
}

TEST_CASE("ranking: the model weighs less where its picks lost on the shapes tuned here") {
  const sfc::AnalyticalModel model(sfc::kNominalCalibration, std::size_t(1) << 20);
  const auto pick_of = [&](const sfc::GemmShape& s) { return model.predict(s, sfc::DType::f32, 2).knobs; };
  const sfc::GemmShape a{512, 512, 512}, b{512, 512, 1024}, shape{512, 512, 700};
  const auto far_from = [](Knobs k) { return Knobs{k.k_layers > 4 ? 1 : 8, k.k_block_factor > 4 ? 1 : 8}; };
  const auto context = [&](bool right, double trust) {
    sfc::RankingOptions options;
    options.model_trust = trust;
    sfc::RankingContext c(model, options);
    for (const sfc::GemmShape& s : {a, b}) c.add(s, bowl(right ? pick_of(s) : far_from(pick_of(s))));
    return c;
  };
  const sfc::RankingContext right = context(true, 0.03), wrong = context(false, 0.03);
  // Its picks timed as the tuned shapes were: no loss where they won, a clear one where they did not.
  std::vector<sfc::RankingNeighbour> won{{.shape = a, .seconds = bowl(pick_of(a))},
                                         {.shape = b, .seconds = bowl(pick_of(b))}};
  CHECK(right.model_regret(won, sfc::DType::f32, 2, sfc::Layout::blocked) == doctest::Approx(0));
  std::vector<sfc::RankingNeighbour> lost{{.shape = a, .seconds = bowl(far_from(pick_of(a)))},
                                          {.shape = b, .seconds = bowl(far_from(pick_of(b)))}};
  CHECK(wrong.model_regret(lost, sfc::DType::f32, 2, sfc::Layout::blocked) > 0.3);
  lost.pop_back();  // one shape is no record yet
  CHECK(wrong.model_regret(lost, sfc::DType::f32, 2, sfc::Layout::blocked) == 0);
  // The ranking follows the tuned shapes more once the model has lost: the
  // model's own pick for the shape drops back.
  const Knobs model_pick = pick_of(shape);
  const double trusted =
      context(false, 0).rank(shape, sfc::DType::f32, 2, sfc::Layout::blocked).score[model_pick.index()];
  const double doubted =
      wrong.rank(shape, sfc::DType::f32, 2, sfc::Layout::blocked).score[model_pick.index()];
  CHECK(doubted > trusted);
}

TEST_CASE("ranking: nearest neighbours and the spread order") {
  const std::vector<sfc::RankingNeighbour> tuned{{.shape = {64, 64, 64}, .seconds = bowl({1, 1})},
                                                 {.shape = {1024, 1024, 1024}, .seconds = bowl({1, 1})},
                                                 {.shape = {512, 512, 512}, .seconds = bowl({1, 1})}};
  const auto near = sfc::nearest_neighbours({1024, 1024, 512}, tuned, 2);
  REQUIRE(near.size() == 2);
  CHECK(sfc::same_shape(near[0].shape, sfc::GemmShape{1024, 1024, 1024}));
  CHECK(near[0].distance == doctest::Approx(1.0));
  CHECK(sfc::same_shape(near[1].shape, sfc::GemmShape{512, 512, 512}));
  CHECK(sfc::log2_distance({64, 64, 64}, {128, 128, 128}) == doctest::Approx(std::sqrt(3.0)));

  const std::vector<sfc::GemmShape> shapes{
      {64, 64, 64}, {128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
  const auto order = sfc::spread_order(shapes);
  REQUIRE(order.size() == shapes.size());
  CHECK(sfc::same_shape(order[0], sfc::GemmShape{256, 256, 256}));  // the centre
  CHECK((sfc::same_shape(order[1], {64, 64, 64}) || sfc::same_shape(order[1], {1024, 1024, 1024})));
  CHECK(std::set<std::int64_t>{order[0].m, order[1].m, order[2].m} == std::set<std::int64_t>{64, 256, 1024});
  // With a known shape at one end, the other end comes first.
  const std::vector<sfc::GemmShape> known{{1024, 1024, 1024}};
  CHECK(sfc::same_shape(sfc::spread_order(shapes, known)[0], {64, 64, 64}));
}

namespace {

// A fake timer: each configuration's runs have a fixed fastest time and spread.
struct FakeTimer {
  std::map<Knobs, double> truth;
  double spread = 0.02;  // (mean - min) / min of every timing
  int screens = 0, rounds = 0;
  std::vector<std::vector<Knobs>> calls;

  sfc::RaceTimer timer(int reps) {
    return [this, reps](const std::vector<Knobs>& configs, bool screening) {
      (screening ? screens : rounds) += 1;
      calls.push_back(configs);
      std::vector<sfc::RaceRuns> out;
      for (Knobs c : configs) {
        const double t = truth.at(c);
        out.push_back(
            {.effective = c, .reps = reps, .min_s = t, .mean_s = t * (1 + spread), .stddev_s = t * spread});
      }
      return std::optional(out);
    };
  }
};

}  // namespace

TEST_CASE("race: the screen drops what is clearly slower, a clear leader stops after one round") {
  FakeTimer fake;
  fake.truth = {{{1, 1}, 1.00}, {{1, 2}, 1.50}, {{2, 1}, 1.10}, {{2, 2}, 2.0}};
  const std::vector<Knobs> list{{1, 2}, {1, 1}, {2, 1}, {2, 2}};
  const sfc::RaceResult r =
      sfc::race(list, fake.timer(3), {.climb = 2, .screen_drop = 0.15, .noise_multiple = 2, .min_gap = 0.01});
  CHECK(r.winner == Knobs{1, 1});
  CHECK(r.winner_seconds == 1.0);
  CHECK(r.screened == 4);
  CHECK(r.fully_timed == 2);  // (1, 1) and (2, 1): within 15%
  CHECK(r.rounds == 1);       // 10% ahead, the noise is 2 x 2% / sqrt(3)
  CHECK(r.runs == 4 * 3 + 2 * 3);
  CHECK_FALSE(r.interrupted);
  REQUIRE(fake.calls.size() == 2);
  CHECK(fake.calls[1] == std::vector<Knobs>{{1, 1}, {2, 1}});
}

TEST_CASE("race: leaders within the measured noise race on to max_rounds") {
  FakeTimer fake;
  fake.truth = {{{1, 1}, 1.000}, {{3, 1}, 1.004}};
  fake.spread = 0.05;
  const sfc::RaceResult r =
      sfc::race({{3, 1}, {1, 1}}, fake.timer(2), {.climb = 0, .max_rounds = 3, .min_gap = 0.0});
  CHECK(r.rounds == 3);
  CHECK(r.winner == Knobs{1, 1});
  // Noiseless runs: the smallest gap decides after one round.
  fake.spread = 0;
  CHECK(sfc::race({{3, 1}, {1, 1}}, fake.timer(2), {.climb = 0, .max_rounds = 3, .min_gap = 0.0}).rounds ==
        1);
  // An exact tie goes to the configuration ranked first.
  fake.truth[{3, 1}] = 1.0;
  fake.spread = 0.05;
  CHECK(sfc::race({{3, 1}, {1, 1}}, fake.timer(2), {.climb = 0, .max_rounds = 2}).winner == Knobs{3, 1});
}

TEST_CASE("race: the climb screens the screen leader's grid neighbours until none is faster") {
  FakeTimer fake;
  for (int i = 0; i < sfc::kConfigCount; ++i) fake.truth[Knobs::at(i)] = bowl({4, 3})[std::size_t(i)];
  // Ranked two steps off: the climb walks to (4, 3).
  const sfc::RaceResult r = sfc::race({{2, 3}}, fake.timer(2), {.climb = 3});
  CHECK(r.winner == Knobs{4, 3});
  REQUIRE(fake.screens == 4);  // the list, then three climbs; the third finds (4, 3)'s neighbours slower
  CHECK(std::ranges::find(fake.calls[1], Knobs{3, 3}) != fake.calls[1].end());
  CHECK(std::ranges::find(fake.calls[2], Knobs{4, 3}) != fake.calls[2].end());
  // More climbs allowed: it stops once the leader's neighbours are all slower.
  FakeTimer again = fake;
  again.screens = 0;
  CHECK(sfc::race({{2, 3}}, again.timer(2), {.climb = 8}).winner == Knobs{4, 3});
  CHECK(again.screens == 4);
  // No climb: the list's best.
  FakeTimer still = fake;
  still.screens = 0;
  CHECK(sfc::race({{2, 3}, {2, 2}}, still.timer(2), {.climb = 0}).winner == Knobs{2, 3});
  CHECK(still.screens == 1);
  // The climb stays within `allowed`.
  FakeTimer fenced = fake;
  CHECK(sfc::race({{2, 3}}, fenced.timer(2), {.climb = 3}, 0xFFFF).winner ==
        Knobs{2, 3});  // K_layers 1 and 2 only
}

TEST_CASE("race: plans shared by clamped configurations are screened once, and a stop interrupts") {
  int calls = 0;
  const sfc::RaceTimer shared = [&](const std::vector<Knobs>& configs, bool) {
    ++calls;
    std::vector<sfc::RaceRuns> out;
    for (Knobs c : configs)
      out.push_back({.effective = {1, std::min(c.k_block_factor, 2)},
                     .reps = 2,
                     .min_s = 1.0 + 0.01 * c.k_block_factor,
                     .mean_s = 1.1,
                     .stddev_s = 0.01});
    return std::optional(out);
  };
  const sfc::RaceResult r = sfc::race({{1, 1}, {1, 2}, {1, 3}}, shared, {.climb = 0});
  CHECK(r.screened == 2);  // (1, 3) runs as (1, 2)
  CHECK(r.winner == Knobs{1, 1});

  const sfc::RaceTimer stopped = [](const std::vector<Knobs>&, bool) {
    return std::optional<std::vector<sfc::RaceRuns>>();
  };
  CHECK(sfc::race({{1, 1}}, stopped, {}).interrupted);
  CHECK(sfc::race({}, stopped, {}).winner == Knobs{0, 0});
  CHECK_THROWS_AS(sfc::race({{1, 1}}, stopped, {.round_reps = 0}), sfc::Error);
  CHECK_THROWS_AS(sfc::race({{1, 1}}, stopped, {.screen_drop = -1}), sfc::Error);
}

namespace {

// Exhaustively "tuned" synthetic shapes whose winner moves with K.
std::vector<sfc::TunedShape> synthetic_table() {
  std::vector<sfc::TunedShape> out;
  for (std::int64_t m : {256, 1024})
    for (std::int64_t k : {256, 1024, 4096}) {
      sfc::TunedShape t;
      t.shape = {m, m, k};
      t.threads = 2;
      const Knobs best{k >= 4096 ? 4 : k >= 1024 ? 2 : 1, m >= 1024 ? 2 : 1};
      const auto s = bowl(best, 1e-5 * double(m * m * k) / 1e6);
      for (int i = 0; i < sfc::kConfigCount; ++i) t.seconds[std::size_t(i)] = float(s[std::size_t(i)]);
      // What the engine clamps runs as what it clamps to.
      for (int i = 0; i < sfc::kConfigCount; ++i) {
        const Knobs e = sfc::effective_config(t.shape, t.dtype, t.threads, t.layout, Knobs::at(i));
        t.seconds[std::size_t(i)] = t.seconds[std::size_t(e.index())];
      }
      t.k_layers = best.k_layers;
      t.k_block_factor = best.k_block_factor;
      out.push_back(t);
    }
  return out;
}

}  // namespace

TEST_CASE("replay: seeded, the same answer twice, and it spends less than the exhaustive replay") {
  const std::vector<sfc::TunedShape> table = synthetic_table();
  const sfc::AnalyticalModel model({.gamma_gflops_per_core = 100, .beta_gbytes_per_s = 50}, 1 << 20);
  const sfc::ReplayReport a = sfc::replay_ranked(table, {}, model, {});
  const sfc::ReplayReport b = sfc::replay_ranked(table, {}, model, {});
  REQUIRE(a.shapes.size() == table.size());
  CHECK(a.runs == b.runs);
  CHECK(a.regret.mean == b.regret.mean);
  CHECK(a.exhaustive_regret.max == b.exhaustive_regret.max);
  for (std::size_t i = 0; i < a.shapes.size(); ++i) {
    CHECK(sfc::same_shape(a.shapes[i].shape, b.shapes[i].shape));
    CHECK(a.shapes[i].race.winner == b.shapes[i].race.winner);
  }
  CHECK(a.runs < a.exhaustive_runs);
  CHECK(a.mean_fully_timed <= a.mean_screened);
  CHECK(a.regret.max >= 0);
  // Noiseless draws: the exhaustive replay finds every stored winner.
  const sfc::ReplayReport exact =
      sfc::replay_ranked(table, {}, std::nullopt, {.noise = 0, .outlier_rate = 0});
  CHECK(exact.exhaustive_regret.max == 0);
  // Another seed draws other runs.
  sfc::ReplayOptions other;
  other.seed = 7;
  CHECK(sfc::replay_ranked(table, {}, model, other).shapes.size() == table.size());

  std::vector<sfc::TunedShape> holes = table;
  holes[0].seconds[5] = NAN;
  CHECK_THROWS_AS(sfc::replay_ranked(holes, {}, model, {}), sfc::Error);
  CHECK_THROWS_AS(sfc::replay_ranked({}, {}, model, {}), sfc::Error);
}

namespace {

sfc::TuneOptions tiny_ranked() {
  setenv("SFC_COLD_BYTES", "1048576", 1);
  return {.dtype = sfc::DType::f32,
          .threads = 2,
          .warmup = 0,
          .reps = 1,
          .search = sfc::Search::ranked,
          .race = {.round_reps = 1, .max_rounds = 2}};
}

}  // namespace

TEST_CASE("tuner: a ranked search records its screens flagged and its rounds as full measurements") {
  const sfc::Tuner tuner(tiny_ranked());
  const sfc::GemmShape shape{64, 96, 512};
  const std::vector<Knobs> list{{1, 1}, {2, 1}, {1, 2}, {2, 2}};
  sfc::RaceResult race;
  const sfc::ShapeTuning t = tuner.race(shape, list, nullptr, {}, &race);
  CHECK_FALSE(t.interrupted);
  int screens = 0, full = 0;
  for (const sfc::Measurement& m : t.measurements) (m.screening ? screens : full) += 1;
  CHECK(screens == race.screened);
  CHECK(full >= race.fully_timed);
  CHECK(race.fully_timed >= 1);
  CHECK(t.result.winner() == race.winner);
  CHECK(t.result.k_layers >= 1);
  // Each plan is warmed once: by the settling run of its visits when several
  // are timed together (the screen of four), else by one warm-up run.
  for (const sfc::Measurement& m : t.measurements) CHECK(m.warmup <= 1);
  CHECK(t.measurements.front().screening);
  CHECK(t.measurements.front().warmup == 0);
  // Done once a configuration is fully measured; an exhaustive search is not.
  CHECK_FALSE(tuner.has_work(sfc::ConfigSet::all(), t.measurements));
  CHECK(tuner.has_work(sfc::ConfigSet::all(), {}));
  CHECK(sfc::Tuner({.threads = 2}).has_work(sfc::ConfigSet::all(), t.measurements));
  // effective() is the plan's clamp.
  const sfc::GemmPlan plan({.shape = {64, 64, 64}, .threads = 2, .k_layers = 8, .k_block_factor = 8});
  CHECK(tuner.effective({64, 64, 64}, {8, 8}) == Knobs{plan.k_layers(), plan.k_block_factor()});
  CHECK_THROWS_AS(sfc::Tuner({.search = sfc::Search::ranked, .race = {.max_rounds = 0}}), sfc::Error);
  CHECK(sfc::parse_search("ranked") == sfc::Search::ranked);
  CHECK(sfc::to_string(sfc::Search::exhaustive) == "exhaustive");
  CHECK_THROWS_AS(sfc::parse_search("greedy"), sfc::Error);
  CHECK(sfc::TuneOptions{}.search == sfc::Search::exhaustive);
}

TEST_CASE(
    "session: a ranked database exports and merges like an exhaustive one, and tunes exhaustively later") {
  sfc::test::TempDir dir("ranked");
  const sfc::Platform platform = sfc::detect_platform(2);
  sfc::SessionOptions options{.tune = tiny_ranked(), .progress = sfc::ProgressStyle::quiet};
  options.model.emplace(sfc::kNominalCalibration, std::size_t(1) << 20);
  const sfc::ShapeGrid grid(std::vector<sfc::GemmShape>{{64, 64, 256}, {64, 96, 512}, {96, 64, 128}});
  sfc::TuningStore ranked(dir.file("ranked.db"), sfc::TuningStore::Mode::create);
  const sfc::SessionSummary s = sfc::tune_grid(ranked, platform, grid, options);
  CHECK(s.tuned == 3);
  CHECK(s.screened >= 3);
  CHECK(s.fully_timed >= 3);
  CHECK(s.runs > 0);
  CHECK(s.fully_timed < 3 * 64);

  // Every shape has a winner and exports to a table with the unscreened configurations NaN.
  const sfc::TuningTable table = ranked.table(platform.hash(), sfc::DType::f32, 2, sfc::Layout::blocked);
  REQUIRE(table.shapes.size() == 3);
  for (const sfc::TunedShape& t : table.shapes) {
    CHECK(t.k_layers >= 1);
    CHECK(std::isfinite(t.seconds[std::size_t(t.winner().index())]));
    CHECK(std::count_if(t.seconds.begin(), t.seconds.end(), [](float x) { return std::isnan(x); }) > 0);
  }
  table.save(dir.file("ranked.table"));
  CHECK(sfc::TuningTable::load(dir.file("ranked.table")).shapes.size() == 3);

  // A rerun finds it done; a merge carries every measurement.
  CHECK(sfc::tune_grid(ranked, platform, grid, options).already_done == 3);
  sfc::TuningStore merged(dir.file("merged.db"), sfc::TuningStore::Mode::create);
  const sfc::ExchangeCounts counts = sfc::merge_results(merged, ranked);
  CHECK(counts.measurements == s.measurements);
  CHECK(merged.winners({platform.hash()}).size() == 3);

  // The exhaustive search later times the rest (one shape, to keep it short).
  sfc::SessionOptions exhaustive{.tune = tiny_ranked(), .progress = sfc::ProgressStyle::quiet};
  exhaustive.tune.search = sfc::Search::exhaustive;
  const sfc::ShapeGrid one(std::vector<sfc::GemmShape>{{96, 64, 128}});
  CHECK(sfc::tune_grid(ranked, platform, one, exhaustive).tuned == 1);
  const sfc::TuningTable full = ranked.table(platform.hash(), sfc::DType::f32, 2, sfc::Layout::blocked);
  for (const sfc::TunedShape& t : full.shapes)
    if (sfc::same_shape(t.shape, {96, 64, 128}))
      for (float x : t.seconds) CHECK(x > 0);
}

TEST_CASE(
    "cli: evaluate --search ranked --replay prints the same replay twice, and refuses what it cannot "
    "replay") {
  const std::string table = std::string(SFC_SOURCE_DIR) + "/data/tables/07b60855a84d41f1-f32-t2-quick.table";
  const auto first = sfc::test::run_cli("evaluate --search ranked --replay " + table + " --json");
  const auto second = sfc::test::run_cli("evaluate --search ranked --replay " + table + " --json");
  REQUIRE(first.exit_code == 0);
  CHECK(first.output == second.output);
  CHECK(first.output.find("configurations screened") != std::string::npos);
  CHECK(first.output.find("\"regret\"") != std::string::npos);
  const auto other_seed =
      sfc::test::run_cli("evaluate --search ranked --replay " + table + " --seed 5 --per-shape");
  CHECK(other_seed.exit_code == 0);
  CHECK(other_seed.output.find("regret") != std::string::npos);

  const auto half = sfc::test::run_cli("evaluate --replay " + table);
  CHECK(half.exit_code != 0);
  CHECK(half.output.find("needs both --search ranked and --replay") != std::string::npos);
  const auto none = sfc::test::run_cli("evaluate --search ranked --replay " + table + " --dtype bf16");
  CHECK(none.exit_code != 0);
  CHECK(none.output.find("no tuned bf16 shapes") != std::string::npos);
  const auto mixed = sfc::test::run_cli("evaluate --search ranked --replay " + table + " --holdout 0.2");
  CHECK(mixed.exit_code != 0);
  const auto prune = sfc::test::run_cli("tune --search ranked --prune --grid 64");
  CHECK(prune.exit_code != 0);
  CHECK(prune.output.find("pick one") != std::string::npos);
  const auto prior = sfc::test::run_cli("tune --prior " + table + " --grid 64");
  CHECK(prior.exit_code != 0);
  CHECK(prior.output.find("needs --search ranked") != std::string::npos);
}
