// AnswerCache: what goes in comes out, keyed by shape, dtype and threads.
// (Concurrency is tested under ThreadSanitizer: tests/predictor/tsan_queries.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "sfc/answer_cache.hpp"

using namespace sfc;

TEST_CASE("cache: answers come back whole, for their own key only") {
  AnswerCache cache(64);
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f32, 2));
  Answer a;
  a.knobs = {3, 7};
  a.tier = Tier::nearest;
  a.distance = 0.25;
  a.nearest = {60, 70, 80};
  cache.insert({64, 64, 64}, DType::f32, 2, a);
  const auto hit = cache.find({64, 64, 64}, DType::f32, 2);
  REQUIRE(hit);
  CHECK(hit->knobs == Knobs{3, 7});
  CHECK(hit->tier == Tier::nearest);
  CHECK(hit->distance == 0.25);
  CHECK(hit->nearest.k == 80);
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f64, 2));
  CHECK_FALSE(cache.find({64, 64, 64}, DType::f32, 1));
  CHECK_FALSE(cache.find({64, 64, 65}, DType::f32, 2));
}

TEST_CASE("cache: a slot holds the latest of two colliding keys") {
  AnswerCache one_slot(1);
  Answer a, b;
  a.knobs = {1, 1};
  b.knobs = {8, 8};
  b.distance = std::numeric_limits<double>::infinity();
  one_slot.insert({1, 2, 3}, DType::bf16, 4, a);
  one_slot.insert({3, 2, 1}, DType::bf16, 4, b);
  CHECK_FALSE(one_slot.find({1, 2, 3}, DType::bf16, 4));
  const auto hit = one_slot.find({3, 2, 1}, DType::bf16, 4);
  REQUIRE(hit);
  CHECK(hit->knobs == Knobs{8, 8});
  CHECK(std::isinf(hit->distance));
}
