// data/grids/llm*.shapes (make-llm.py): the LLM projection sets load as
// shape files, list each shape once, stay bounded, and the PyTorch files are
// the numpy files with M and N swapped.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sfc/shape_grid.hpp"

namespace {

std::vector<sfc::GemmShape> load(const std::string& name) {
  return sfc::ShapeGrid::load(std::string(SFC_SOURCE_DIR) + "/data/grids/" + name).shapes();
}

}  // namespace

TEST_CASE("data: the LLM shape sets, in both orientations, prefill and decode") {
  for (const auto& set : {std::pair<std::string, std::set<std::int64_t>>{"llm", {256, 512, 1024, 2048, 4096}},
                          std::pair<std::string, std::set<std::int64_t>>{"llm-decode", {1, 8, 32, 64}}}) {
    const std::string& stem = set.first;  // not a structured binding: CAPTURE's lambda takes it (clang 14)
    const std::set<std::int64_t>& token_counts = set.second;
    CAPTURE(stem);
    const std::vector<sfc::GemmShape> numpy = load(stem + ".shapes");
    const std::vector<sfc::GemmShape> torch = load(stem + "-torch.shapes");
    CHECK(numpy.size() >= 20);
    CHECK(numpy.size() <= 30);
    REQUIRE(torch.size() == numpy.size());
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> unique;
    std::set<std::int64_t> tokens;
    double gflop = 0;
    for (std::size_t i = 0; i < numpy.size(); ++i) {
      const sfc::GemmShape& s = numpy[i];
      unique.emplace(s.m, s.n, s.k);
      tokens.insert(s.m);  // numpy orientation: M = tokens
      CHECK(torch[i].m == s.n);
      CHECK(torch[i].n == s.m);
      CHECK(torch[i].k == s.k);
      gflop += s.flops() / 1e9;
    }
    CHECK(unique.size() == numpy.size());  // identical projections across families listed once
    CHECK(tokens == token_counts);         // every token count the set names appears
    CHECK(gflop < 1500);                   // bounded: benched in minutes
  }
}
