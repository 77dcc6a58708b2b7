// Loading tuned winners from tables and databases: this machine's platform by
// default, another only by name, and every kind of unusable file.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "sfc/tuning_source.hpp"
#include "support.hpp"
#include "test_predictor_support.hpp"

using namespace sfc;
using sfc::test::region_shapes;
using sfc::test::synthetic_table;
using Kind = SourceError::Kind;

namespace {

Platform other_machine() {
  Platform p = detect_platform(2);
  p.cpu_model = "Some Other CPU";
  return p;
}

Kind kind_of_failure(const std::string& path, const std::string& platform = "") {
  try {
    load_tuning_tables(path, platform);
  } catch (const SourceError& e) {
    return e.kind();
  }
  FAIL("loading " << path << " did not fail");
  return Kind::corrupt;
}

}  // namespace

TEST_CASE("source: a table of this machine loads; another machine's only by its hash") {
  const test::TempDir dir;
  TuningTable here = synthetic_table(region_shapes(), {200, 60});
  here.platform = detect_platform(2);
  here.save(dir.file("here.sfctable"));
  const std::vector<TuningTable> tables = load_tuning_tables(dir.file("here.sfctable"));
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].shapes.size() == 27);
  CHECK(tables[0].calibration.beta_gbytes_per_s == 60);
  CHECK(is_this_machine(tables[0].platform));

  TuningTable there = here;
  there.platform = other_machine();
  there.save(dir.file("there.sfctable"));
  CHECK_FALSE(is_this_machine(there.platform));
  try {
    load_tuning_tables(dir.file("there.sfctable"));
    FAIL("another machine's table was accepted");
  } catch (const SourceError& e) {
    CHECK(e.kind() == Kind::platform);
    CHECK(std::string(e.what()).find(there.platform.hash()) != std::string::npos);
    CHECK(std::string(e.what()).find("Some Other CPU") != std::string::npos);
  }
  CHECK(load_tuning_tables(dir.file("there.sfctable"), there.platform.hash()).size() == 1);
  CHECK(kind_of_failure(dir.file("here.sfctable"), there.platform.hash()) == Kind::platform);
}

TEST_CASE("source: a database yields this machine's platforms with their calibration") {
  const test::TempDir dir;
  const std::string db = dir.file("tuning.db");
  {
    TuningStore store(db, TuningStore::Mode::create);
    test::record_synthetic(store, detect_platform(2), region_shapes());
    store.save_calibration(detect_platform(2).hash(), {150, 40});
    test::record_synthetic(store, other_machine(), region_shapes());
  }
  const std::vector<TuningTable> tables = load_tuning_tables(db);
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].platform.hash() == detect_platform(2).hash());
  CHECK(tables[0].shapes.size() == 27);
  CHECK(tables[0].calibration.gamma_gflops_per_core == 150);
  const auto winner = std::find_if(tables[0].shapes.begin(), tables[0].shapes.end(),
                                   [](const TunedShape& s) { return s.shape.k == 4096; });
  REQUIRE(winner != tables[0].shapes.end());
  CHECK(winner->k_layers == 2);
  CHECK(winner->k_block_factor == 4);

  CHECK(load_tuning_tables(db, other_machine().hash()).at(0).platform.cpu_model ==
        "Some Other CPU");
  CHECK(kind_of_failure(db, "0123456789abcdef") == Kind::platform);
}

TEST_CASE("source: a database of other machines only is refused, listing them") {
  const test::TempDir dir;
  const std::string db = dir.file("elsewhere.db");
  {
    TuningStore store(db, TuningStore::Mode::create);
    test::record_synthetic(store, other_machine(), region_shapes());
  }
  try {
    load_tuning_tables(db);
    FAIL("a database without this machine was accepted");
  } catch (const SourceError& e) {
    CHECK(e.kind() == Kind::platform);
    CHECK(std::string(e.what()).find(other_machine().hash()) != std::string::npos);
  }
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
