// Export, import and merge: lossless round trips, the merge semantics, and
// files that must be refused without touching the store.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/store_exchange.hpp"
#include "sfc/tuning_store.hpp"
#include "test_db_support.hpp"

using sfc::ExportFormat;
using sfc::Measurement;
using sfc::TuningStore;
using sfc::test::sample_measurement;
using sfc::test::slurp;
using sfc::test::TempDir;
using Mode = sfc::TuningStore::Mode;

namespace {

// Two platforms (one with "a, quoted" CPU name), a calibration, screening rows.
void fill(TuningStore& store) {
  const sfc::Platform a = sfc::test::sample_platform(2),
                      b = sfc::test::sample_platform(4, "CPU \"B\", rev, 2");
  store.upsert_platform(a);
  store.upsert_platform(b);
  store.save_calibration(a.hash(), {191.25, 0.1 + 0.2}, "2025-01-01T00:00:00.000000Z");
  std::vector<Measurement> rows;
  for (int s = 0; s < 3; ++s)
    for (int kl = 1; kl <= 2; ++kl)
      for (int kbf = 1; kbf <= 3; ++kbf)
        rows.push_back(sample_measurement({256 << s, 512, 100 + s}, kl, kbf, 1e-3 * (1 + kl * kbf) / 7.0,
                                          "2025-01-02T00:00:0" + std::to_string(s) + ".5Z",
                                          kl == 2 && kbf == 3));
  store.record(a.hash(), rows);
  Measurement row = sample_measurement({64, 64, 64}, 8, 8, 1.0 / 3.0, "t");
  row.layout = sfc::Layout::row_major;
  store.record(b.hash(), std::vector<Measurement>{row});
}

void export_to(const TuningStore& store, ExportFormat format, const std::string& path, bool all = true) {
  sfc::export_results(store, {.format = format, .path = path, .platform_hash = "", .all = all});
}

std::string error_of(auto&& action) {
  try {
    action();
  } catch (const sfc::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("exchange: csv and json exports made with --all import back without loss") {
  for (ExportFormat format : {ExportFormat::csv, ExportFormat::json}) {
    CAPTURE(static_cast<int>(format));
    TempDir dir("exchange");
    TuningStore original(dir.file("a.db"), Mode::create);
    fill(original);
    export_to(original, format, dir.file("first"));

    TuningStore copy(dir.file("b.db"), Mode::create);
    const sfc::ExchangeCounts counts = sfc::import_results(copy, dir.file("first"));
    CHECK(counts.platforms == 2);
    CHECK(counts.measurements == 19);
    CHECK(counts.duplicates == 0);
    // Everything a store reads back is equal, down to the last bit of every double...
    for (const sfc::Platform& p : original.platforms()) {
      const std::vector<Measurement> a = original.measurements({p.hash()}), b = copy.measurements({p.hash()});
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].mean_s == b[i].mean_s);
        CHECK(a[i].stddev_s == b[i].stddev_s);
        CHECK(a[i].screening == b[i].screening);
        CHECK(a[i].measured_at == b[i].measured_at);
        CHECK(a[i].blocks.bn == b[i].blocks.bn);
        CHECK(a[i].layout == b[i].layout);
      }
      CHECK(original.calibration(p.hash()).beta_gbytes_per_s == copy.calibration(p.hash()).beta_gbytes_per_s);
      CHECK(original.calibration_time(p.hash()) == copy.calibration_time(p.hash()));
      CHECK(copy.platform(p.hash())->cpu_model == p.cpu_model);
    }
    // ...so exporting the copy writes the same bytes.
    export_to(copy, format, dir.file("second"));
    CHECK(slurp(dir.file("second")) == slurp(dir.file("first")));
    // Importing again adds nothing.
    CHECK(sfc::import_results(copy, dir.file("first")).duplicates == 19);
    CHECK(copy.measurements({sfc::test::sample_platform(2).hash()}).size() == 18);
  }
}

TEST_CASE("exchange: a version 1 csv export, without layouts, imports as blocked") {
  TempDir dir("exchange");
  TuningStore original(dir.file("a.db"), Mode::create);
  const sfc::Platform p = sfc::test::sample_platform(2);
  original.upsert_platform(p);
  original.record(p.hash(), std::vector<Measurement>{sample_measurement({64, 64, 64}, 1, 1, 1e-3, "t1"),
                                                     sample_measurement({64, 64, 64}, 2, 1, 2e-3, "t2")});
  export_to(original, ExportFormat::csv, dir.file("v2.csv"));
  std::string text = slurp(dir.file("v2.csv"));
  // Version 1 had no layout column.
  for (const std::string_view from : {",layout,", ",blocked,", ",blocked,"}) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text = text.substr(0, at) + "," + text.substr(at + from.size());
  }
  CHECK(text.find("blocked") == std::string::npos);
  sfc::test::write_file(dir.file("v1.csv"), text);
  TuningStore copy(dir.file("b.db"), Mode::create);
  CHECK(sfc::import_results(copy, dir.file("v1.csv")).measurements == 2);
  for (const Measurement& m : copy.measurements({p.hash()})) CHECK(m.layout == sfc::Layout::blocked);
  CHECK(copy.winner({p.hash(), sfc::DType::f32, 2, sfc::Layout::blocked, sfc::GemmShape{64, 64, 64}})
            ->k_layers == 1);
}

TEST_CASE("exchange: winners-only exports and damaged files and tables are refused, the store unchanged") {
  TempDir dir("exchange");
  TuningStore source(dir.file("a.db"), Mode::create);
  fill(source);
  TuningStore target(dir.file("b.db"), Mode::create);
  auto import_error = [&](const std::string& path) {
    return error_of([&] { sfc::import_results(target, path); });
  };

  export_to(source, ExportFormat::csv, dir.file("winners.csv"), false);
  export_to(source, ExportFormat::json, dir.file("winners.json"), false);
  CHECK(import_error(dir.file("winners.csv")).find("winners only") != std::string::npos);
  CHECK(import_error(dir.file("winners.json")).find("winners only") != std::string::npos);

  sfc::export_results(source, {.format = ExportFormat::table,
                               .path = dir.file("t.table"),
                               .platform_hash = sfc::test::sample_platform(2).hash(),
                               .all = false});
  const std::string table = slurp(dir.file("t.table"));
  sfc::test::write_file(dir.file("cut.table"), table.substr(0, table.rfind("\nshape ") + 1));
  CHECK(import_error(dir.file("cut.table")).find("cut.table") != std::string::npos);

  export_to(source, ExportFormat::csv, dir.file("all.csv"));
  std::string csv = slurp(dir.file("all.csv"));
  const std::size_t third_line = csv.find('\n', csv.find('\n') + 1) + 1;
  std::string damaged = csv;
  damaged.replace(damaged.find(",f32,", third_line), 5, ",f16,");
  sfc::test::write_file(dir.file("damaged.csv"), damaged);
  CHECK(import_error(dir.file("damaged.csv")).find("damaged.csv:3: dtype") != std::string::npos);
  sfc::test::write_file(dir.file("short.csv"), csv.substr(0, csv.size() - 40));
  CHECK(import_error(dir.file("short.csv")).find("fields, the header has") != std::string::npos);

  export_to(source, ExportFormat::json, dir.file("all.json"));
  const std::string json = slurp(dir.file("all.json"));
  sfc::test::write_file(dir.file("cut.json"), json.substr(0, json.size() / 2));
  CHECK(import_error(dir.file("cut.json")).find("not valid JSON") != std::string::npos);
  std::string edited = json;
  edited.replace(edited.find("\"reps\": 10", edited.find("\"measurements\": [")), 10, "\"reps\": -1");
  sfc::test::write_file(dir.file("edited.json"), edited);
  CHECK(import_error(dir.file("edited.json")).find("measurements[0]: reps") != std::string::npos);
  edited = json;
  edited.replace(edited.find("\"cores\": 2"), 10, "\"cores\": 3");
  sfc::test::write_file(dir.file("hash.json"), edited);
  CHECK(import_error(dir.file("hash.json")).find("does not match") != std::string::npos);
  CHECK(import_error(dir.file("absent.csv")).find("cannot read") != std::string::npos);

  CHECK(target.platforms().empty());  // nothing of any refused file landed

  // The whole table imports: the source's winners again.
  sfc::import_results(target, dir.file("t.table"));
  const std::string hash = sfc::test::sample_platform(2).hash();
  const auto winners = target.winners({hash}), expected = source.winners({hash});
  REQUIRE(winners.size() == expected.size());
  for (std::size_t i = 0; i < winners.size(); ++i) {
    CHECK(winners[i].k_layers == expected[i].k_layers);
    CHECK(winners[i].k_block_factor == expected[i].k_block_factor);
  }
}

TEST_CASE("exchange: exports to unwritable places fail cleanly, a table needs one platform") {
  TempDir dir("exchange");
  TuningStore store(dir.file("a.db"), Mode::create);
  fill(store);
  CHECK(error_of([&] {
          export_to(store, ExportFormat::csv, dir.file("no/dir/x.csv"));
        }).find("cannot write") != std::string::npos);
  CHECK(error_of([&] { export_to(store, ExportFormat::table, dir.file("t.table")); }).find("--platform") !=
        std::string::npos);
  CHECK(error_of([&] {
          sfc::export_results(
              store, {.format = ExportFormat::csv, .path = dir.file("x.csv"), .platform_hash = "ffff"});
        }).find("no platform ffff") != std::string::npos);
  CHECK_THROWS_AS(sfc::parse_export_format("xml"), sfc::Error);
}

TEST_CASE("merge: measurements of both runs are kept and the winner recomputed, platforms stay apart") {
  TempDir dir("merge");
  const sfc::Platform p = sfc::test::sample_platform(2), q = sfc::test::sample_platform(2, "Another CPU");
  const sfc::GemmShape shape{512, 512, 512};
  TuningStore run1(dir.file("run1.db"), Mode::create), run2(dir.file("run2.db"), Mode::create);
  run1.upsert_platform(p);
  run2.upsert_platform(p);
  run2.upsert_platform(q);
  // Run 1 finds (1,1) fastest; run 2 measures (1,1) much slower and (2,2)
  // faster than anything run 1 saw.
  run1.record(p.hash(), std::vector<Measurement>{sample_measurement(shape, 1, 1, 1e-3, "r1"),
                                                 sample_measurement(shape, 2, 2, 2e-3, "r1")});
  run2.record(p.hash(), std::vector<Measurement>{sample_measurement(shape, 1, 1, 5e-3, "r2"),
                                                 sample_measurement(shape, 2, 2, 0.5e-3, "r2")});
  run2.record(q.hash(), std::vector<Measurement>{sample_measurement(shape, 4, 1, 1e-4, "r2")});
  run1.save_calibration(p.hash(), {100, 10}, "2025-01-01T00:00:00Z");
  run2.save_calibration(p.hash(), {200, 20}, "2025-06-01T00:00:00Z");

  TuningStore out(dir.file("out.db"), Mode::create);
  CHECK(sfc::merge_results(out, run1).measurements == 2);
  const sfc::ExchangeCounts second = sfc::merge_results(out, run2);
  CHECK(second.measurements == 3);
  CHECK(second.platforms == 2);
  CHECK(sfc::merge_results(out, run2).duplicates == 3);  // merging again adds nothing

  CHECK(out.platforms().size() == 2);
  CHECK(out.measurements({p.hash()}).size() == 4);
  // Pooled, the winner is the fastest run of any configuration (sfc/tuner.hpp
  // says why the fastest, not the mean): (2,2)'s 0.4375e-3 from run 2 beats
  // (1,1)'s 0.875e-3 from run 1.
  const std::optional<sfc::Winner> w =
      out.winner({p.hash(), sfc::DType::f32, 2, sfc::Layout::blocked, shape});
  REQUIRE(w);
  CHECK(w->k_layers == 2);
  CHECK(w->min_s == doctest::Approx(0.4375e-3));
  CHECK(out.winner({q.hash(), sfc::DType::f32, 2, sfc::Layout::blocked, shape})->k_layers == 4);
  CHECK(out.calibration(p.hash()).gamma_gflops_per_core == 200);  // the newer one
  sfc::merge_results(out, run1);
  CHECK(out.calibration(p.hash()).gamma_gflops_per_core == 200);  // an older one does not replace it
}
