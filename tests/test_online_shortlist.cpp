// Online tuning's candidates: a ranked shortlist, and an answer that says how
// many configurations were timed.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "sfc/config_ranking.hpp"
#include "sfc/config_service.hpp"
#include "sfc/online_tuner.hpp"
#include "sfc/tuning_store.hpp"
#include "test_db_support.hpp"
#include "test_predictor_support.hpp"

using namespace sfc::test;

TEST_CASE(
    "online tuning: the candidates are the predictors' answers, then the ranked search's order, each once") {
  sfc::ModelPrediction model;
  model.seconds.fill(std::numeric_limits<double>::infinity());
  model.knobs = {3, 4};
  for (int i = 0; i < sfc::kConfigCount; ++i) model.config_seconds[std::size_t(i)] = 2.0 + i;
  model.config_seconds[std::size_t(sfc::Knobs{3, 4}.index())] = 1.0;
  model.config_seconds[std::size_t(sfc::Knobs{2, 4}.index())] = 1.5;
  const sfc::GemmShape shape{512, 512, 512};
  const std::vector<sfc::Knobs> list = sfc::online_shortlist(shape, model, {{1, 1}, {3, 4}}, 6);
  REQUIRE(list.size() == 6);
  CHECK(list[0] == sfc::Knobs{1, 1});
  CHECK(list[1] == sfc::Knobs{3, 4});
  CHECK(list[2] == sfc::Knobs{2, 4});  // the ranker's second: its first is listed already
  const sfc::ConfigRanking ranked = sfc::rank_configs(shape, &model, {});
  std::vector<sfc::Knobs> rest;
  for (const sfc::Knobs& k : ranked.order)
    if (!(k == sfc::Knobs{1, 1}) && !(k == sfc::Knobs{3, 4}) && !(k == sfc::Knobs{2, 4})) rest.push_back(k);
  CHECK(std::vector<sfc::Knobs>(list.begin() + 3, list.end()) ==
        std::vector<sfc::Knobs>(rest.begin(), rest.begin() + 3));
  CHECK(std::set<sfc::Knobs>(list.begin(), list.end()).size() == list.size());
  CHECK(sfc::online_shortlist(shape, model, {}, 2) == std::vector<sfc::Knobs>{{3, 4}, {2, 4}});
}

TEST_CASE("online tuning: an exact answer says how many configurations its shape has measured") {
  sfc::TunedShape all = synthetic_shape({256, 256, 256}, {1, 2});
  sfc::TunedShape few = synthetic_shape({512, 512, 512}, {1, 2});
  for (int i = 0; i < sfc::kConfigCount; ++i)
    if (i >= 4) few.seconds[std::size_t(i)] = NAN;
  const sfc::ConfigPredictor predictor({synthetic_table({all, few})});
  const sfc::Answer full = predictor.query({256, 256, 256}, sfc::DType::f32, 2);
  CHECK(full.tier == sfc::Tier::exact);
  CHECK(full.measured_configs == sfc::kConfigCount);
  const sfc::Answer shortlist = predictor.query({512, 512, 512}, sfc::DType::f32, 2);
  CHECK(shortlist.tier == sfc::Tier::exact);
  CHECK(shortlist.measured_configs == 4);
  CHECK(predictor.query({300, 300, 300}, sfc::DType::f32, 2).measured_configs == 0);
}

TEST_CASE(
    "online tuning: from an empty database more than one candidate is timed, and the answer says how many") {
  TempDir dir("online-shortlist");
  const std::string db = dir.file("online.db");
  const std::vector<std::string> env = {"SFC_TUNE=online", "SFC_TUNE_DB=" + db, "SFC_TUNE_BUDGET_MS=60000",
                                        "OMP_NUM_THREADS=2"};
  CliProcess tuning({"gemm", "40", "64", "64", "4096"}, dir.file("tuning"), env, SFC_RECORD_DRIVER);
  CHECK(tuning.wait() == 0);
  std::set<std::pair<int, int>> timed;
  {
    const sfc::TuningStore store(db, sfc::TuningStore::Mode::read_only);
    for (const sfc::Platform& p : store.platforms())
      for (const sfc::Measurement& m : store.measurements(sfc::ResultFilter(
               p.hash(), sfc::DType::f32, 2, sfc::Layout::row_major, sfc::GemmShape{64, 64, 4096})))
        timed.insert({m.k_layers, m.k_block_factor});
  }
  CHECK(timed.size() > 1);
  CHECK(timed.size() <= sfc::OnlineTuner::kShortlist);
  const sfc::Answer answer =
      sfc::ConfigService::open(db).query({64, 64, 4096}, sfc::DType::f32, 2, sfc::Layout::row_major);
  CHECK(answer.tier == sfc::Tier::exact);
  CHECK(answer.measured_configs == int(timed.size()));
  CHECK(answer.measured_configs < sfc::kConfigCount);
}
