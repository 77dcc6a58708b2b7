// Loading tuned winners from tables and databases: this machine's platform
// (or a compatible one) by default, a foreign one only when forced or named,
// and every kind of unusable file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "sfc/tuning_source.hpp"
#include "support.hpp"
#include "test_predictor_support.hpp"

using namespace sfc;
using sfc::test::region_shapes;
using sfc::test::synthetic_table;
using Kind = SourceError::Kind;

namespace {

Kind kind_of_failure(const std::string& path, const PlatformChoice& choice = {}) {
  try {
    load_tuning_tables(path, choice);
  } catch (const SourceError& e) {
    return e.kind();
  }
  FAIL("loading " << path << " did not fail");
  return Kind::corrupt;
}

PlatformChoice by_hash(const Platform& p) { return PlatformChoice::parse(p.hash()); }

}  // namespace

TEST_CASE(
    "source: this machine's table loads, a compatible one too, a foreign one only when forced or named") {
  const test::TempDir dir;
  TuningTable here = synthetic_table(region_shapes(), {200, 60});
  here.platform = detect_platform(2);
  here.save(dir.file("here.sfctable"));
  const std::vector<TuningTable> tables = load_tuning_tables(dir.file("here.sfctable"));
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].shapes.size() == 27);
  CHECK(tables[0].calibration.beta_gbytes_per_s == 60);
  CHECK(is_this_machine(tables[0].platform));

  TuningTable sibling = here;
  sibling.platform = test::compatible_machine(2);
  sibling.save(dir.file("sibling.sfctable"));
  CHECK_FALSE(is_this_machine(sibling.platform));
  CHECK(load_tuning_tables(dir.file("sibling.sfctable")).size() == 1);

  TuningTable there = here;
  there.platform = test::foreign_machine(2);
  there.save(dir.file("there.sfctable"));
  try {
    load_tuning_tables(dir.file("there.sfctable"));
    FAIL("a foreign machine's table was accepted");
  } catch (const SourceError& e) {
    const std::string what = e.what();
    CHECK(e.kind() == Kind::platform);
    CHECK(what.find(there.platform.hash()) != std::string::npos);
    CHECK(what.find("Some Other CPU") != std::string::npos);
    CHECK(what.find("isa: tuned") != std::string::npos);  // the fields that differ are named
    CHECK(what.find("l2_bytes") != std::string::npos);
    CHECK(what.find("--platform any") != std::string::npos);
  }
  CHECK(load_tuning_tables(dir.file("there.sfctable"), PlatformChoice::parse("any")).size() == 1);
  CHECK(load_tuning_tables(dir.file("there.sfctable"), by_hash(there.platform)).size() == 1);
  CHECK(kind_of_failure(dir.file("here.sfctable"), by_hash(there.platform)) == Kind::platform);
}

TEST_CASE("source: the platform choice parses this, any and hashes, and SFC_PLATFORM stands in") {
  CHECK(PlatformChoice::parse("").kind == PlatformChoice::Kind::this_machine);
  CHECK(PlatformChoice::parse("this").kind == PlatformChoice::Kind::this_machine);
  CHECK(PlatformChoice::parse("any").kind == PlatformChoice::Kind::any);
  CHECK(PlatformChoice::parse("0123456789abcdef").hash == "0123456789abcdef");
  for (const char* bad : {"ANY", "0123456789ABCDEF", "0123", "elsewhere"})
    CHECK_THROWS_AS(PlatformChoice::parse(bad), Error);
  setenv("SFC_PLATFORM", "any", 1);
  CHECK(PlatformChoice::parse_or_environment("").kind == PlatformChoice::Kind::any);
  CHECK(PlatformChoice::parse_or_environment("this").kind == PlatformChoice::Kind::this_machine);
  setenv("SFC_PLATFORM", "bogus", 1);
  CHECK_THROWS_WITH_AS(PlatformChoice::parse_or_environment(""), doctest::Contains("SFC_PLATFORM"), Error);
  unsetenv("SFC_PLATFORM");
  CHECK(PlatformChoice::parse_or_environment("").kind == PlatformChoice::Kind::this_machine);
}

TEST_CASE("source: a database yields one platform per thread count, the best match first") {
  const test::TempDir dir;
  const std::string db = dir.file("tuning.db");
  std::vector<TunedShape> one_shape = {region_shapes().front()};
  {
    TuningStore store(db, TuningStore::Mode::create);
    test::record_synthetic(store, detect_platform(2), region_shapes());
    store.save_calibration(detect_platform(2).hash(), {150, 40});
    test::record_synthetic(store, test::foreign_machine(2), region_shapes());
    test::record_synthetic(store, test::compatible_machine(2), one_shape);
    // 4 threads: only a compatible platform and a foreign one.
    std::vector<TunedShape> four = region_shapes();
    for (TunedShape& s : four) s.threads = 4;
    test::record_synthetic(store, test::compatible_machine(4), four);
    test::record_synthetic(store, test::foreign_machine(4), four);
  }
  const std::vector<TuningTable> tables = load_tuning_tables(db);
  REQUIRE(tables.size() == 2);
  CHECK(tables[0].platform.hash() == detect_platform(2).hash());  // exact beats compatible
  CHECK(tables[0].shapes.size() == 27);
  CHECK(tables[0].calibration.gamma_gflops_per_core == 150);
  CHECK(tables[1].platform.hash() == test::compatible_machine(4).hash());
  const auto winner = std::find_if(tables[0].shapes.begin(), tables[0].shapes.end(),
                                   [](const TunedShape& s) { return s.shape.k == 4096; });
  REQUIRE(winner != tables[0].shapes.end());
  CHECK(winner->k_layers == 2);
  CHECK(winner->k_block_factor == 4);

  CHECK(load_tuning_tables(db, by_hash(test::foreign_machine(2))).at(0).platform.cpu_model ==
        "Some Other CPU");
  CHECK(kind_of_failure(db, PlatformChoice::parse("0123456789abcdef")) == Kind::platform);
}

TEST_CASE("source: a database of foreign machines only is refused, listing them") {
  const test::TempDir dir;
  const std::string db = dir.file("elsewhere.db");
  {
    TuningStore store(db, TuningStore::Mode::create);
    test::record_synthetic(store, test::foreign_machine(), region_shapes());
  }
  try {
    load_tuning_tables(db);
    FAIL("a database without this machine was accepted");
  } catch (const SourceError& e) {
    CHECK(e.kind() == Kind::platform);
    CHECK(std::string(e.what()).find(test::foreign_machine().hash()) != std::string::npos);
  }
  CHECK(load_tuning_tables(db, PlatformChoice::parse("any")).size() == 1);
}

TEST_CASE("source: missing, empty, truncated and corrupt files are refused by kind") {
  const test::TempDir dir;
  CHECK(kind_of_failure(dir.file("missing.db")) == Kind::unreadable);
  CHECK(kind_of_failure(dir.path().string()) == Kind::unreadable);
  std::ofstream(dir.file("empty")).flush();
  CHECK(kind_of_failure(dir.file("empty")) == Kind::corrupt);
  std::ofstream(dir.file("text")) << "hello\n";
  CHECK(kind_of_failure(dir.file("text")) == Kind::corrupt);
  // SQLite's header followed by garbage: looks like a database, is not one.
  std::ofstream(dir.file("fake.db"), std::ios::binary)
      << std::string("SQLite format 3\0", 16) << std::string(4096, 'x');
  CHECK(kind_of_failure(dir.file("fake.db")) == Kind::corrupt);

  TuningTable here = synthetic_table(region_shapes());
  here.platform = detect_platform(2);
  here.save(dir.file("here.sfctable"));
  std::ifstream in(dir.file("here.sfctable"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir.file("cut.sfctable")) << text.substr(0, text.size() * 2 / 3);
  CHECK(kind_of_failure(dir.file("cut.sfctable")) == Kind::corrupt);
}
