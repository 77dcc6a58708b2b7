// The tuning-table file: round trips, and every kind of damage is an sfc::Error.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/tuning_table.hpp"
#include "test_db_support.hpp"

namespace fs = std::filesystem;
using sfc::test::slurp;
using sfc::test::TempDir;

namespace {

sfc::TuningTable sample_table(int shape_count) {
  sfc::TuningTable table;
  table.platform = sfc::test::sample_platform(2, "Test CPU, 2 cores @ 3 GHz");
  table.calibration = {95.5, 21.25};
  for (int i = 0; i < shape_count; ++i) {
    sfc::TunedShape s;
    s.shape = {256 + i, 512, 1024 + 2 * i};
    s.dtype = i % 2 ? sfc::DType::f64 : sfc::DType::f32;
    s.threads = 2;
    s.layout = i % 3 == 2 ? sfc::Layout::row_major : sfc::Layout::blocked;
    s.k_layers = 1 + i % 8;
    s.k_block_factor = 1 + (i / 8) % 8;
    for (int c = 0; c < sfc::kConfigCount; ++c)
      s.seconds[c] = c % 5 == 4 ? NAN : 1e-3f * float(1 + c) + 1e-6f * float(i);
    s.seconds[sfc::config_index(s.k_layers, s.k_block_factor)] = 5e-4f;
    table.shapes.push_back(s);
  }
  return table;
}

// The loader's message for `text`, or "" when it loads.
std::string load_error(const TempDir& dir, const std::string& text) {
  const std::string path = dir.file("damaged.table");
  sfc::test::write_file(path, text);
  try {
    sfc::TuningTable::load(path);
  } catch (const sfc::Error& e) {
    return e.what();
  }
  return "";
}

// `text` (a version 3 table of `platform`) as an older version wrote it: no
// numa_nodes line, the old hash over every field, the old magic line.
std::string as_legacy(std::string text, const sfc::Platform& platform, const std::string& magic) {
  const auto replace = [&](const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("sfc-table 3\n", magic + "\n");
  replace("platform numa_nodes 1\n", "");
  replace("platform hash " + platform.hash(), "platform hash " + sfc::legacy_platform_hash(platform));
  return text;
}

}  // namespace

TEST_CASE("tuning table: save then load keeps every field (times to 6 digits)") {
  TempDir dir("table");
  const sfc::TuningTable table = sample_table(20);
  table.save(dir.file("t.table"));
  const sfc::TuningTable back = sfc::TuningTable::load(dir.file("t.table"));

  CHECK(back.platform.cpu_model == table.platform.cpu_model);
  CHECK(back.platform.hash() == table.platform.hash());
  CHECK(back.calibration.gamma_gflops_per_core == table.calibration.gamma_gflops_per_core);
  CHECK(back.calibration.beta_gbytes_per_s == table.calibration.beta_gbytes_per_s);
  REQUIRE(back.shapes.size() == table.shapes.size());
  for (std::size_t i = 0; i < table.shapes.size(); ++i) {
    const sfc::TunedShape &a = table.shapes[i], &b = back.shapes[i];
    CHECK(b.shape.m == a.shape.m);
    CHECK(b.shape.n == a.shape.n);
    CHECK(b.shape.k == a.shape.k);
    CHECK(b.dtype == a.dtype);
    CHECK(b.threads == a.threads);
    CHECK(b.layout == a.layout);
    CHECK(b.k_layers == a.k_layers);
    CHECK(b.k_block_factor == a.k_block_factor);
    for (int c = 0; c < sfc::kConfigCount; ++c) {
      if (std::isnan(a.seconds[c])) {
        CHECK(std::isnan(b.seconds[c]));
      } else {
        CHECK(b.seconds[c] == doctest::Approx(a.seconds[c]).epsilon(1e-5));
      }
    }
  }
  // Saving what was loaded writes the same bytes: the format is stable.
  back.save(dir.file("again.table"));
  CHECK(slurp(dir.file("again.table")) == slurp(dir.file("t.table")));
}

TEST_CASE("tuning table: a version 1 file, without layouts, loads as blocked") {
  TempDir dir("table");
  sample_table(2).save(dir.file("t.table"));
  std::string text = slurp(dir.file("t.table"));
  const auto replace = [&](const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  text = as_legacy(text, sample_table(2).platform, "sfc-table 1");
  replace(" f32 2 blocked ", " f32 2 ");
  replace(" f64 2 blocked ", " f64 2 ");
  sfc::test::write_file(dir.file("v1.table"), text);
  const sfc::TuningTable v1 = sfc::TuningTable::load(dir.file("v1.table"));
  REQUIRE(v1.shapes.size() == 2);
  CHECK(v1.shapes[1].dtype == sfc::DType::f64);
  CHECK(v1.shapes[1].layout == sfc::Layout::blocked);
  CHECK(v1.shapes[1].k_layers == 2);
  // A version 1 line with a layout field has one field too many.
  replace(" f32 2 ", " f32 2 row ");
  CHECK(load_error(dir, text).find("fields") != std::string::npos);
}

TEST_CASE(
    "tuning table: a version 2 file loads re-keyed: its L3 and NUMA nodes unknown, its hash the hardware's") {
  TempDir dir("table");
  const sfc::TuningTable table = sample_table(3);
  table.save(dir.file("t.table"));
  const std::string v2 = as_legacy(slurp(dir.file("t.table")), table.platform, "sfc-table 2");
  sfc::test::write_file(dir.file("v2.table"), v2);
  const sfc::TuningTable loaded = sfc::TuningTable::load(dir.file("v2.table"));
  CHECK(loaded.shapes.size() == 3);
  CHECK(loaded.platform.l3_bytes == 0);
  CHECK(loaded.platform.numa_nodes == 0);
  CHECK(loaded.platform.legacy());
  CHECK(loaded.platform.l2_bytes == table.platform.l2_bytes);
  CHECK(loaded.platform.compiler == table.platform.compiler);
  sfc::Platform expected = table.platform;
  expected.l3_bytes = 0;
  expected.numa_nodes = 0;
  CHECK(loaded.platform.hash() == expected.hash());
  // Saved again it is a version 3 file under the new hash, and loads as such.
  loaded.save(dir.file("v3.table"));
  CHECK(slurp(dir.file("v3.table")).starts_with("sfc-table 3\nplatform cpu_model"));
  CHECK(sfc::TuningTable::load(dir.file("v3.table")).platform.hash() == expected.hash());
  // An edited legacy block matches neither hash.
  std::string edited = v2;
  edited.replace(edited.find("platform cores 2"), 16, "platform cores 4");
  CHECK(load_error(dir, edited).find("does not match its fields") != std::string::npos);
  // A version 3 file must have numa_nodes.
  std::string missing = slurp(dir.file("t.table"));
  missing.erase(missing.find("platform numa_nodes 1\n"), 22);
  CHECK(load_error(dir, missing).find("'platform numa_nodes' is missing") != std::string::npos);
}

TEST_CASE("tuning table: a 2000-shape table loads") {
  TempDir dir("table");
  sample_table(2000).save(dir.file("big.table"));
  CHECK(sfc::TuningTable::load(dir.file("big.table")).shapes.size() == 2000);
}

TEST_CASE("tuning table: every truncation is an error, never a crash") {
  TempDir dir("table");
  sample_table(3).save(dir.file("t.table"));
  const std::string text = slurp(dir.file("t.table"));
  // Cut at every byte: the loader must refuse each prefix (the shape count and
  // the final newline make even a cut at a line boundary detectable).
  for (std::size_t cut = 0; cut < text.size(); cut += 7) {
    CAPTURE(cut);
    CHECK(load_error(dir, text.substr(0, cut)) != "");
  }
}

TEST_CASE("tuning table: damaged content names the line and the reason") {
  TempDir dir("table");
  sample_table(2).save(dir.file("t.table"));
  const std::string good = slurp(dir.file("t.table"));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };

  CHECK(load_error(dir, "hello\n").find(":1: not a tuning table") != std::string::npos);
  CHECK(load_error(dir, replaced("sfc-table 3", "sfc-table 9")).find("unsupported table version") !=
        std::string::npos);
  CHECK(load_error(dir, replaced("platform cores 2", "platform cores 3")).find("does not match") !=
        std::string::npos);
  CHECK(load_error(dir, replaced("platform cores 2", "platform cores two")).find(":3: platform cores") !=
        std::string::npos);
  CHECK(load_error(dir, replaced(" f32 ", " f16 ")) != "");
  CHECK(load_error(dir, replaced(" f32 2 blocked 1 1 ", " f32 2 blocked 9 1 ")).find("1..8") !=
        std::string::npos);
  CHECK(load_error(dir, replaced(" f32 2 blocked ", " f32 2 diagonal ")).find("unknown layout") !=
        std::string::npos);
  CHECK(load_error(dir, replaced("shapes 2", "shapes 3")).find("truncated") != std::string::npos);
  CHECK(load_error(dir, replaced("shapes 2", "shapes 1")).find("more shape lines") != std::string::npos);
  CHECK(load_error(dir, replaced("shape 256 512", "shape -256 512")).find("must be in 1..2147483647") !=
        std::string::npos);
  CHECK(load_error(dir, replaced(" nan", " -1")).find("must be nan or in 1e-12..1e6") != std::string::npos);
  CHECK(load_error(dir, replaced(" nan", "")).find("fields") != std::string::npos);
  CHECK(load_error(dir, replaced("calibration", "calibrashun")).find("unexpected line") != std::string::npos);

  // A missing file and a directory are errors too.
  CHECK_THROWS_AS(sfc::TuningTable::load(dir.file("absent.table")), sfc::Error);
  CHECK_THROWS_AS(sfc::TuningTable::load(dir.path().string()), sfc::Error);
}

TEST_CASE("tuning table: saving to an unwritable place is an error and leaves nothing behind") {
  TempDir dir("table");
  CHECK_THROWS_AS(sample_table(1).save(dir.file("no/such/dir/t.table")), sfc::Error);
  CHECK_THROWS_AS(sample_table(1).save(dir.path().string()), sfc::Error);  // a directory
  CHECK(fs::is_empty(dir.path()));
}
