// ShapeGrid, Shard and ConfigSet parsing: what each spec means, and that every
// malformed one is an sfc::Error that says where and why.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <set>
#include <string>
#include <tuple>

#include "sfc/config_set.hpp"
#include "sfc/error.hpp"
#include "sfc/shape_grid.hpp"
#include "test_db_support.hpp"

using sfc::ShapeGrid;

namespace {

std::string error_of(auto&& make) {
  try {
    make();
  } catch (const sfc::Error& e) {
    return e.what();
  }
  return "";
}

bool has(const ShapeGrid& grid, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (const sfc::GemmShape& s : grid.shapes())
    if (s.m == m && s.n == n && s.k == k) return true;
  return false;
}

}  // namespace

TEST_CASE("grid: one list is the cube of it, M outermost") {
  const ShapeGrid grid = ShapeGrid::parse("256,512,1024");
  REQUIRE(grid.size() == 27);
  CHECK(grid.shapes()[0].m == 256);
  CHECK(grid.shapes()[1].k == 512);  // K varies fastest
  CHECK(grid.shapes()[26].n == 1024);
  CHECK(ShapeGrid::parse("512:8192").size() == 125);  // a bare range doubles: the paper's grid
}

TEST_CASE("grid: per-dimension lists, ranges and steps") {
  const ShapeGrid grid = ShapeGrid::parse("m=512:8192:x2 n=128,256 k=1024");
  CHECK(grid.size() == 5 * 2 * 1);
  CHECK(has(grid, 8192, 256, 1024));
  CHECK(ShapeGrid::parse("k=64 M=100:400:+100 n=7").size() == 4);
  CHECK(ShapeGrid::parse("m=64:256:64 n=1 k=1").size() == 4);  // a plain step adds
  CHECK(ShapeGrid::parse("m=5:100:x3 n=1 k=1").size() == 3);   // 5 15 45
  CHECK(ShapeGrid::parse("  m=1  n=2\tk=3 ").size() == 1);
  CHECK(ShapeGrid::parse("512,256,512").size() == 8);  // duplicates collapse
}

TEST_CASE("grid: malformed specs say why") {
  auto parse = [](const char* spec) { return error_of([&] { ShapeGrid::parse(spec); }); };
  CHECK(parse("").find("empty") != std::string::npos);
  CHECK(parse("m=1 n=2").find("k=LIST is missing") != std::string::npos);
  CHECK(parse("m=1 m=2 n=1 k=1").find("given twice") != std::string::npos);
  CHECK(parse("x=1 n=2 k=3").find("is not m=LIST") != std::string::npos);
  CHECK(parse("256,abc").find("not an integer") != std::string::npos);
  CHECK(parse("0,256").find("must lie in 1..") != std::string::npos);
  CHECK(parse("99999999999999999999").find("not an integer") != std::string::npos);
  CHECK(parse("512:256").find("backwards") != std::string::npos);
  CHECK(parse("m=512:8192:y2 n=1 k=1").find("the step y2") != std::string::npos);
  CHECK(parse("m=512:8192:x1 n=1 k=1").find("the step x1") != std::string::npos);
  CHECK(parse("1:2:3:4").find("is not LO:HI") != std::string::npos);
  CHECK(parse("1,,2").find("not an integer") != std::string::npos);
  CHECK(parse("m=1:1000000:+1 n=1 k=1").find("more than") != std::string::npos);
}

TEST_CASE("grid: shape files, with comments, and their errors by line") {
  sfc::test::TempDir dir("grid");
  const std::string good = dir.file("good.shapes");
  sfc::test::write_file(good, "# M N K\n256 512 1024   # a comment\n\n  64\t64 64\n256 512 1024\n");
  const ShapeGrid grid = ShapeGrid::load(good);
  REQUIRE(grid.size() == 2);
  CHECK(has(grid, 64, 64, 64));

  auto load = [&](const std::string& text) {
    const std::string path = dir.file("bad.shapes");
    sfc::test::write_file(path, text);
    return error_of([&] { ShapeGrid::load(path); });
  };
  CHECK(load("1 2 3\n4 5\n").find("bad.shapes:2: expected three sizes") != std::string::npos);
  CHECK(load("1 2 3\n4 5 six\n").find("bad.shapes:2: K 'six'") != std::string::npos);
  CHECK(load("1 2 3 4\n").find(":1: expected three sizes 'M N K', got 4") != std::string::npos);
  CHECK(load("0 1 1\n").find(":1: M '0': must lie in") != std::string::npos);
  CHECK(load("# nothing\n").find("lists no shapes") != std::string::npos);
  CHECK(error_of([&] { ShapeGrid::load(dir.file("absent.shapes")); }).find("cannot read") !=
        std::string::npos);
}

TEST_CASE("grid: a shape file that is a pipe, a device or a directory is refused without reading it") {
  sfc::test::TempDir dir("grid-special");
  const std::string fifo = dir.file("shapes.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Each read would block (no writer) or never end (/dev/zero) before this was refused.
  CHECK(error_of([&] { ShapeGrid::load(fifo); }).find("not a regular file") != std::string::npos);
  CHECK(error_of([] { ShapeGrid::load("/dev/zero"); }).find("not a regular file") != std::string::npos);
  CHECK(error_of([&] { ShapeGrid::load(dir.path().string()); }).find("cannot read") != std::string::npos);
}

TEST_CASE("grid: the shipped grid files hold the documented shapes") {
  const std::string dir = std::string(SFC_SOURCE_DIR) + "/data/grids/";
  CHECK(ShapeGrid::load(dir + "quick.shapes").size() == 27);
  CHECK(ShapeGrid::load(dir + "small.shapes").size() == 64);
  const ShapeGrid paper = ShapeGrid::load(dir + "paper.shapes");
  CHECK(paper.size() == 125);
  CHECK(has(paper, 8192, 512, 4096));
  // The benchmark sets of docs/bench.md and docs/experiments.
  CHECK(ShapeGrid::load(dir + "skinny.shapes").size() == 20);
  CHECK(ShapeGrid::load(dir + "large.shapes").size() == 12);
  CHECK(ShapeGrid::load(dir + "thin-m.shapes").size() == 30);
  CHECK(ShapeGrid::load(dir + "row-tasks.shapes").size() == 30);
  const ShapeGrid ragged = ShapeGrid::load(dir + "ragged.shapes");
  CHECK(ragged.size() == 8);
  CHECK(has(ragged, 1000, 1000, 1000));
}

TEST_CASE("grid: random shapes are log-uniform, distinct and reproducible") {
  const ShapeGrid a = ShapeGrid::random(200, 128, 16384, 7), b = ShapeGrid::random(200, 128, 16384, 7);
  REQUIRE(a.size() == 200);
  int below_1024 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const sfc::GemmShape &s = a.shapes()[i], &t = b.shapes()[i];
    CHECK((s.m == t.m && s.n == t.n && s.k == t.k));
    CHECK((s.m >= 128 && s.m <= 16384 && s.n >= 128 && s.k <= 16384));
    below_1024 += s.m < 1024;
  }
  // Log-uniform: 128..1024 is 3 of the 7 octaves, so about 86 of 200 (uniform would give 13).
  CHECK(below_1024 > 50);
  CHECK(below_1024 < 120);
  CHECK(ShapeGrid::random(200, 128, 16384, 8).shapes()[0].m != a.shapes()[0].m);
  CHECK(ShapeGrid::random(8, 1, 2, 1).size() == 8);  // every shape of a tiny range
  CHECK(error_of([] { ShapeGrid::random(9, 1, 2, 1); }).find("fewer than 9") != std::string::npos);
  CHECK(error_of([] { ShapeGrid::random(0, 1, 2, 1); }) != "");
  // A count past the cap is refused at once rather than growing memory for minutes.
  CHECK(error_of([] { ShapeGrid::random(100'000'000, 1, 1 << 20, 1); }).find("1..1000000") !=
        std::string::npos);
  CHECK(error_of([] { sfc::parse_dimension_range("512"); }).find("LO:HI") != std::string::npos);
  CHECK(sfc::parse_dimension_range("128:8192").second == 8192);
}

TEST_CASE("grid: shards partition the grid") {
  const ShapeGrid grid = ShapeGrid::parse("256,512,1024");
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  std::size_t total = 0;
  for (int i = 0; i < 4; ++i) {
    const ShapeGrid part = grid.shard(sfc::Shard::parse(std::to_string(i) + "/4"));
    total += part.size();
    for (const sfc::GemmShape& s : part.shapes()) seen.emplace(s.m, s.n, s.k);
  }
  CHECK(total == 27);
  CHECK(seen.size() == 27);
  CHECK(grid.shard({0, 4}).size() == 7);
  CHECK(grid.shard({3, 4}).size() == 6);
  CHECK(error_of([] { sfc::Shard::parse("4/4"); }).find("shard index") != std::string::npos);
  CHECK(error_of([] { sfc::Shard::parse("1/0"); }).find("shard count") != std::string::npos);
  CHECK(error_of([] { sfc::Shard::parse("1"); }).find("expected I/N") != std::string::npos);
  CHECK(sfc::Shard::parse("2/5").to_string() == "2/5");
}

TEST_CASE("config sets: all, narrowed, and refused") {
  CHECK(sfc::ConfigSet::all().size() == 64);
  const sfc::ConfigSet set = sfc::ConfigSet::parse("1,2,4", "1:3");
  CHECK(set.size() == 9);
  CHECK(set.contains({4, 3}));
  CHECK_FALSE(set.contains({3, 1}));
  CHECK(set.configs().front() == sfc::Knobs{1, 1});
  CHECK(set.configs().back() == sfc::Knobs{4, 3});
  CHECK(error_of([] { sfc::ConfigSet::parse("0:8", "1"); }).find("--k-layers '0': must lie in 1..8") !=
        std::string::npos);
  CHECK(error_of([] { sfc::ConfigSet::parse("1", "9"); }).find("must lie in 1..8") != std::string::npos);
}

TEST_CASE("tuner: Knobs index and its inverse cover the 64 configurations once") {
  std::set<int> seen;
  for (int i = 0; i < sfc::kConfigCount; ++i) {
    const sfc::Knobs k = sfc::Knobs::at(i);
    CHECK(k.valid());
    CHECK(k.index() == i);
    seen.insert(k.k_layers * 100 + k.k_block_factor);
  }
  CHECK(seen.size() == std::size_t(sfc::kConfigCount));
  CHECK_FALSE(sfc::Knobs{0, 1}.valid());
  CHECK_FALSE(sfc::Knobs{1, 9}.valid());
  CHECK(error_of([] { sfc::Knobs{9, 1}.check(); }) == "k_layers must be in 1..8, got 9");
  CHECK(error_of([] { sfc::Knobs{1, 0}.check(); }) == "k_block_factor must be in 1..8, got 0");
}
