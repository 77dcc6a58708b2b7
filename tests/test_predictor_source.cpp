// Loading tuned winners from tables and databases: this machine's platform
// (or a compatible one) by default, a foreign one only when forced or named,
// and every kind of unusable file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
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

namespace {

// A table of `platform` holding region_shapes() as `dtype` at the platform's
// thread count, saved under the fleet's naming pattern in `dir`.
std::string save_fleet_table(const test::TempDir& dir, const Platform& platform, DType dtype,
                             const std::string& suffix, Calibration calibration, std::size_t shapes = 27) {
  std::vector<TunedShape> held = region_shapes();
  held.resize(std::min(shapes, held.size()));
  for (TunedShape& s : held) {
    s.dtype = dtype;
    s.threads = platform.threads;
  }
  TuningTable table = synthetic_table(held, calibration, platform.threads);
  table.platform = platform;
  const std::string name = platform.hash() + "-" + std::string(to_string(dtype)) + "-t" +
                           std::to_string(platform.threads) + suffix + ".table";
  table.save(dir.file(name));
  return name;
}

const FolderTable& entry_named(const std::vector<FolderTable>& tables, const std::string& name) {
  for (const FolderTable& t : tables)
    if (std::filesystem::path(t.file).filename() == name) return t;
  FAIL("the survey does not list " << name);
  return tables.front();
}

}  // namespace

TEST_CASE("source: a folder gives, per dtype and thread count, the best table: exact, full, most shapes") {
  const test::TempDir dir;
  unsetenv("SFC_PLATFORM");
  const Platform here = detect_platform(2);
  // f32 at 2 threads: a full exact table beats a reduced exact one with as many shapes.
  const std::string f32_full = save_fleet_table(dir, here, DType::f32, "", {200, 60});
  const std::string f32_small = save_fleet_table(dir, here, DType::f32, "-small", {111, 60});
  // bf16 at 2 threads: an exact reduced table beats a compatible full one.
  const std::string bf16_small = save_fleet_table(dir, here, DType::bf16, "-quick", {222, 60}, 5);
  const std::string bf16_compatible =
      save_fleet_table(dir, test::compatible_machine(2), DType::bf16, "", {333, 60});
  // 4 threads: a compatible table serves; a foreign one is refused.
  const std::string four_compatible =
      save_fleet_table(dir, test::compatible_machine(4), DType::f32, "", {444, 60}, 3);
  const std::string four_foreign = save_fleet_table(dir, test::foreign_machine(4), DType::f32, "", {555, 60});
  std::ofstream(dir.file("broken.table")) << "sfc-table 3\nplatform\n";
  std::ofstream(dir.file("notes.txt")) << "not a table\n";
  // Named f64, holding f32 shapes: passed over, never served as f64.
  const std::string misnamed = here.hash() + "-f64-t2.table";
  std::filesystem::copy_file(dir.file(f32_full), dir.file(misnamed));

  const std::vector<TuningTable> tables = load_tuning_tables(dir.path().string());
  REQUIRE(tables.size() == 3);
  auto served = [&](DType dtype, int threads) -> const TuningTable* {
    for (const TuningTable& t : tables)
      if (!t.shapes.empty() && t.shapes.front().dtype == dtype && t.platform.threads == threads) return &t;
    return nullptr;
  };
  REQUIRE(served(DType::f32, 2));
  CHECK(served(DType::f32, 2)->calibration.gamma_gflops_per_core == 200);
  CHECK(served(DType::f32, 2)->shapes.size() == 27);
  REQUIRE(served(DType::bf16, 2));
  CHECK(served(DType::bf16, 2)->calibration.gamma_gflops_per_core == 222);
  CHECK(served(DType::bf16, 2)->shapes.size() == 5);
  REQUIRE(served(DType::f32, 4));
  CHECK(served(DType::f32, 4)->calibration.gamma_gflops_per_core == 444);
  for (const TuningTable& t : tables)
    CHECK(std::all_of(t.shapes.begin(), t.shapes.end(),
                      [&](const TunedShape& s) { return s.dtype == t.shapes.front().dtype; }));

  const std::vector<FolderTable> survey = survey_tuning_folder(dir.path().string());
  CHECK(survey.size() == 8);  // notes.txt is not a candidate
  CHECK(entry_named(survey, f32_full).chosen_for == std::vector<std::string>{"f32 2 threads"});
  CHECK(entry_named(survey, f32_small).chosen_for.empty());
  CHECK(entry_named(survey, f32_small).reduced);
  CHECK(entry_named(survey, bf16_compatible).match == PlatformMatch::compatible);
  CHECK(entry_named(survey, bf16_compatible).chosen_for.empty());
  CHECK(entry_named(survey, four_foreign).match == PlatformMatch::foreign);
  CHECK(entry_named(survey, four_foreign).chosen_for.empty());
  CHECK_FALSE(entry_named(survey, "broken.table").problem.empty());
  CHECK(entry_named(survey, misnamed).dtypes == std::vector<DType>{DType::f64});  // what the name says

  // Forced, the foreign 4-thread table competes and loses to the compatible one; named, it alone serves.
  CHECK(load_tuning_tables(dir.path().string(), PlatformChoice::parse("any")).size() == 3);
  const std::vector<TuningTable> named =
      load_tuning_tables(dir.path().string(), by_hash(test::foreign_machine(4)));
  REQUIRE(named.size() == 1);
  CHECK(named[0].calibration.gamma_gflops_per_core == 555);
}

TEST_CASE("source: a folder with nothing for this machine is refused, naming what it holds") {
  const test::TempDir dir;
  unsetenv("SFC_PLATFORM");
  CHECK(kind_of_failure(dir.path().string()) == Kind::unreadable);  // empty
  const Platform other = test::foreign_machine(2);
  save_fleet_table(dir, other, DType::f32, "", {100, 50});
  save_fleet_table(dir, other, DType::f32, "-small", {100, 50});
  std::ofstream(dir.file("broken.table")) << "hello\n";
  try {
    load_tuning_tables(dir.path().string());
    FAIL("a folder without this machine was accepted");
  } catch (const SourceError& e) {
    CHECK(e.kind() == Kind::platform);
    const std::string what = e.what();
    // A machine's tables are named once, with how it differs from this one.
    CHECK(what.find("2 tables of " + other.hash()) != std::string::npos);
    CHECK(what.find(other.hash(), what.find(other.hash()) + 1) == std::string::npos);
    CHECK(what.find("foreign (") != std::string::npos);
    CHECK(what.find("broken.table is unreadable") != std::string::npos);
    CHECK(what.find("--search ranked") != std::string::npos);
  }
  CHECK(load_tuning_tables(dir.path().string(), PlatformChoice::parse("any")).size() == 1);
}

TEST_CASE("source: a database in a folder competes like a table, per dtype") {
  const test::TempDir dir;
  unsetenv("SFC_PLATFORM");
  {
    TuningStore store(dir.file("tuning.db"), TuningStore::Mode::create);
    test::record_synthetic(store, detect_platform(2), region_shapes());
  }
  save_fleet_table(dir, test::compatible_machine(2), DType::f32, "", {100, 50});
  save_fleet_table(dir, test::compatible_machine(2), DType::bf16, "", {100, 50});
  const std::vector<TuningTable> tables = load_tuning_tables(dir.path().string());
  REQUIRE(tables.size() == 2);  // f32 from the database (exact), bf16 from the compatible table
  for (const TuningTable& t : tables)
    CHECK(t.platform.hash() == (t.shapes.front().dtype == DType::f32 ? detect_platform(2).hash()
                                                                     : test::compatible_machine(2).hash()));
  CHECK_FALSE(std::filesystem::exists(dir.file("tuning.db-wal")));
}
