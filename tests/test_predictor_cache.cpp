// AnswerCache: what goes in comes out, keyed by shape, dtype, threads and layout.
// (Concurrency is tested under ThreadSanitizer: tests/predictor/tsan_queries.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "sfc/answer_cache.hpp"
#include "sfc/config_service.hpp"
#include "test_predictor_support.hpp"

using namespace sfc;

TEST_CASE("cache: answers come back whole, for their own key only") {
  AnswerCache cache(64);
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f32, 2, Layout::blocked));
  Answer a;
  a.knobs = {3, 7};
  a.tier = Tier::nearest;
  a.distance = 0.25;
  a.nearest = {60, 70, 80};
  cache.insert({64, 64, 64}, DType::f32, 2, Layout::blocked, a);
  const auto hit = cache.find({64, 64, 64}, DType::f32, 2, Layout::blocked);
  REQUIRE(hit);
  CHECK(hit->knobs == Knobs{3, 7});
  CHECK(hit->tier == Tier::nearest);
  CHECK(hit->distance == 0.25);
  CHECK(hit->nearest.k == 80);
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f64, 2, Layout::blocked));
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f32, 1, Layout::blocked));
  CHECK_FALSE(cache.find({64, 64, 65}, DType::f32, 2, Layout::blocked));
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f32, 2, Layout::row_major));
}

TEST_CASE("cache: a bucket holds two keys, a third evicts one, never the newest") {
  AnswerCache one_bucket(2);
  Answer a;
  a.distance = std::numeric_limits<double>::infinity();
  for (int i = 1; i <= 2; ++i) {
    a.knobs = {i, i};
    one_bucket.insert({i, 2, 3}, DType::bf16, 4, Layout::blocked, a);
  }
  CHECK(one_bucket.find({1, 2, 3}, DType::bf16, 4, Layout::blocked));
  CHECK(one_bucket.find({2, 2, 3}, DType::bf16, 4, Layout::blocked));
  a.knobs = {8, 8};
  one_bucket.insert({3, 2, 1}, DType::bf16, 4, Layout::blocked, a);
  const auto hit = one_bucket.find({3, 2, 1}, DType::bf16, 4, Layout::blocked);
  REQUIRE(hit);
  CHECK(hit->knobs == Knobs{8, 8});
  CHECK(std::isinf(hit->distance));
  CHECK(bool(one_bucket.find({1, 2, 3}, DType::bf16, 4, Layout::blocked)) !=
        bool(one_bucket.find({2, 2, 3}, DType::bf16, 4, Layout::blocked)));
  // Inserting a key again replaces its own entry, not the other way's.
  a.knobs = {5, 5};
  one_bucket.insert({3, 2, 1}, DType::bf16, 4, Layout::blocked, a);
  CHECK(one_bucket.find({3, 2, 1}, DType::bf16, 4, Layout::blocked)->knobs == Knobs{5, 5});
  CHECK(bool(one_bucket.find({1, 2, 3}, DType::bf16, 4, Layout::blocked)) !=
        bool(one_bucket.find({2, 2, 3}, DType::bf16, 4, Layout::blocked)));
}

TEST_CASE("cache: ConfigService answers a repeated query from its cache, the same as the predictor") {
  std::vector<TuningTable> tables(1);
  tables[0].platform = detect_platform(2);
  tables[0].shapes = {test::synthetic_shape({512, 512, 512}, {2, 4})};
  const ConfigService service(ConfigPredictor(tables, {}, tables[0].platform));
  const Answer first = service.query({500, 520, 510}, DType::f32, 2, Layout::blocked);
  const Answer again = service.query({500, 520, 510}, DType::f32, 2, Layout::blocked);
  const Answer direct = service.predictor().query({500, 520, 510}, DType::f32, 2, Layout::blocked);
  CHECK(first.knobs == direct.knobs);
  CHECK(again.knobs == direct.knobs);
  CHECK(again.tier == direct.tier);
  CHECK(again.distance == direct.distance);
  CHECK_THROWS_AS(service.query({0, 1, 1}, DType::f32, 2, Layout::blocked), Error);
  // No file: the model or the default answers, never an error.
  CHECK(ConfigService::open(std::nullopt).query({100, 100, 100}, DType::f32, 1).knobs.valid());
}
