// TuningStore: round trips, winners, tables, and refusing files it must not touch.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "schema.hpp"  // db/src: builds old databases for the migration test
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/record_fields.hpp"
#include "sfc/shape_claims.hpp"
#include "sfc/tuning_store.hpp"
#include "sqlite.hpp"
#include "test_db_sqlite.hpp"
#include "test_db_support.hpp"

using sfc::Measurement;
using sfc::TuningStore;
using sfc::test::raw_sql;
using sfc::test::sample_measurement;
using sfc::test::slurp;
using sfc::test::TempDir;
using Mode = sfc::TuningStore::Mode;

namespace {

std::string open_error(const std::string& path, Mode mode) {
  try {
    TuningStore store(path, mode);
  } catch (const sfc::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("store: measurements round trip and a second record of the same ones adds nothing") {
  TempDir dir("store");
  const sfc::Platform platform = sfc::test::sample_platform();
  const std::string hash = platform.hash();
  const sfc::GemmShape shape{256, 512, 128};
  std::vector<Measurement> rows = {
      sample_measurement(shape, 1, 1, 2e-3, "2025-01-01T00:00:00.000001Z"),
      sample_measurement(shape, 2, 1, 1e-3, "2025-01-01T00:00:00.000002Z"),
      sample_measurement(shape, 2, 2, 3e-3, "2025-01-01T00:00:00.000003Z", true)};
  rows[1].effective_k_block_factor = 1;
  rows[1].blocks = {64, 32, 16};
  {
    TuningStore store(dir.file("t.db"), Mode::create);
    store.upsert_platform(platform);
    store.upsert_platform(platform);  // idempotent
    CHECK(store.record(hash, rows) == 3);
    CHECK(store.record(hash, rows) == 0);
  }
  TuningStore store(dir.file("t.db"), Mode::read_only);
  REQUIRE(store.platforms().size() == 1);
  CHECK(store.platforms()[0].hash() == hash);
  CHECK(store.platforms()[0].cpu_model == platform.cpu_model);
  const std::vector<Measurement> back = store.measurements({hash, sfc::DType::f32, 2, sfc::Layout::blocked});
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    for (const sfc::RecordField<Measurement>& f : sfc::measurement_fields()) {  // every field, exactly
      CAPTURE(f.name);
      CHECK(f.get(back[i]) == f.get(rows[i]));
    }
  }
  CHECK(store.measurements({hash, sfc::DType::f64, 2, sfc::Layout::blocked}).empty());
  CHECK(store.measurements({hash, sfc::DType::f32, 2, sfc::Layout::row_major}).empty());
  CHECK(store.measurements({hash, sfc::DType::f32, 2, sfc::Layout::blocked, shape}).size() == 3);
  CHECK(
      store.measurements({hash, sfc::DType::f32, 2, sfc::Layout::blocked, sfc::GemmShape{1, 2, 3}}).empty());
}

TEST_CASE("store: winners are the fastest run over repeated measurements, screening ones excluded") {
  TempDir dir("store");
  const std::string hash = sfc::test::sample_platform().hash();
  const sfc::GemmShape a{512, 512, 512}, b{1024, 256, 512};
  TuningStore store(dir.file("t.db"), Mode::create);
  store.upsert_platform(sfc::test::sample_platform());
  store.record(hash,
               std::vector<Measurement>{
                   // a: (1,1) measured twice, fastest run 0.875 x 2e-3 = 1.75e-3: it wins, though its
                   // pooled mean (3e-3) is slower than (1,2)'s (2.5e-3, fastest 2.1875e-3);
                   // (4,4) screened faster still, but it has no full measurement.
                   sample_measurement(a, 1, 1, 2e-3, "t1"), sample_measurement(a, 1, 1, 4e-3, "t2"),
                   sample_measurement(a, 1, 2, 2.5e-3, "t3"), sample_measurement(a, 4, 4, 1e-3, "t4", true),
                   // b: a tie goes to the fewer copies of C.
                   sample_measurement(b, 2, 1, 1e-3, "t5"), sample_measurement(b, 1, 3, 1e-3, "t6")});
  const std::vector<sfc::Winner> winners = store.winners({hash, sfc::DType::f32, 2, sfc::Layout::blocked});
  REQUIRE(winners.size() == 2);
  CHECK(winners[0].shape.m == 512);
  CHECK(winners[0].k_layers == 1);
  CHECK(winners[0].k_block_factor == 1);
  CHECK(winners[0].mean_s == doctest::Approx(3e-3));
  CHECK(winners[0].min_s == doctest::Approx(1.75e-3));
  CHECK(winners[1].shape.m == 1024);
  CHECK(winners[1].k_layers == 1);
  CHECK(winners[1].k_block_factor == 3);

  const sfc::TuningTable table = store.table(hash, sfc::DType::f32, 2, sfc::Layout::blocked);
  REQUIRE(table.shapes.size() == 2);
  const sfc::TunedShape& t = table.shapes[0];
  CHECK(t.seconds[sfc::config_index(1, 1)] == doctest::Approx(1.75e-3));
  CHECK(t.seconds[sfc::config_index(1, 2)] == doctest::Approx(2.1875e-3));
  CHECK(t.seconds[sfc::config_index(4, 4)] == doctest::Approx(0.875e-3));  // screening-only time
  CHECK(std::isnan(t.seconds[sfc::config_index(8, 8)]));
  CHECK(t.k_layers == 1);
  CHECK(t.k_block_factor == 1);
  CHECK(table.platform.hash() == hash);

  const std::vector<sfc::ResultGroup> groups = store.result_groups(hash);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].shapes == 2);
  CHECK(groups[0].tuned_shapes == 2);
  CHECK(groups[0].measurements == 6);
}

TEST_CASE(
    "store: a version 1 database, winners chosen by mean and no layouts, migrates to the current schema") {
  TempDir dir("store");
  const std::string path = dir.file("v1.db");
  std::string hash = sfc::test::sample_platform().hash();
  {
    sfc::sqlite::Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    sfc::schema::migrate(db, 1);
  }
  // What version 1 held for 512x512x512: (1,1) measured twice (mean 3e-3,
  // fastest 1.75e-3), (1,2) once (mean 2.5e-3, fastest 2.1875e-3), and the
  // mean rule's winner, (1,2).
  raw_sql(path, (R"sql(
    INSERT INTO platforms VALUES (1, ')sql" +
                 hash + R"sql(', 'Test CPU', 2, 2, 49152, 1048576, 33554432,
                                  'avx2', '1.17', 'gcc 12');
    INSERT INTO shapes VALUES (1, 512, 512, 512);
    INSERT INTO measurements (platform_id, shape_id, dtype, threads, k_layers, k_block_factor, effective_k_layers,
      effective_k_block_factor, bm, bn, bk, warmup, reps, mean_s, min_s, stddev_s, screening, measured_at)
    VALUES (1, 1, 'f32', 2, 1, 1, 1, 1, 32, 64, 128, 2, 10, 2e-3, 1.75e-3, 1e-4, 0, 't1'),
           (1, 1, 'f32', 2, 1, 1, 1, 1, 32, 64, 128, 2, 10, 4e-3, 3.5e-3, 1e-4, 0, 't2'),
           (1, 1, 'f32', 2, 1, 2, 1, 2, 32, 64, 128, 2, 10, 2.5e-3, 2.1875e-3, 1e-4, 0, 't3');
    INSERT INTO winning_configs VALUES (1, 1, 'f32', 2, 1, 2, 2.5e-3, 2.1875e-3, 10);
  )sql")
                    .c_str());
  CHECK(open_error(path, Mode::read_only).find("migrate") != std::string::npos);
  TuningStore store(path, Mode::read_write);
  CHECK(store.schema_version() == sfc::schema::kVersion);
  // Re-keyed by version 4: the hash of the hardware, the L3 size unknown.
  REQUIRE(store.platforms().size() == 1);
  const std::string old_hash = hash;
  hash = store.platforms()[0].hash();
  CHECK(hash != old_hash);
  CHECK(store.platforms()[0].l3_bytes == 0);
  CHECK(store.platforms()[0].legacy());
  const std::vector<sfc::Winner> winners = store.winners({hash, sfc::DType::f32, 2, sfc::Layout::blocked});
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].k_block_factor == 1);
  CHECK(winners[0].min_s == doctest::Approx(1.75e-3));
  CHECK(store.measurements({hash, sfc::DType::f32, 2, sfc::Layout::blocked}).size() == 3);
  CHECK(store.winners({hash, sfc::DType::f32, 2, sfc::Layout::row_major}).empty());
  // Measurements through another layout now have winners of their own.
  Measurement row = sample_measurement({512, 512, 512}, 2, 1, 1e-3, "t4");
  row.layout = sfc::Layout::row_major;
  CHECK(store.record(hash, std::vector<Measurement>{row}) == 1);
  REQUIRE(store.winner({hash, sfc::DType::f32, 2, sfc::Layout::row_major, sfc::GemmShape{512, 512, 512}}));
  CHECK(store.winner({hash, sfc::DType::f32, 2, sfc::Layout::row_major, sfc::GemmShape{512, 512, 512}})
            ->k_layers == 2);
  CHECK(store.winner({hash, sfc::DType::f32, 2, sfc::Layout::blocked, sfc::GemmShape{512, 512, 512}})
            ->k_layers == 1);
  CHECK(store.result_groups(hash).size() == 2);
}

TEST_CASE("store: version 4 re-keys a version 3 database, twins that differed only in L3 or compiler merge") {
  TempDir dir("store");
  const std::string path = dir.file("v3.db");
  // Two machines of one kind, keyed apart by a junk L3 size (and a compiler),
  // each with a measurement of one shape; and a third, other machine.
  const auto [a, b, other] = sfc::test::make_version3_database(path, sfc::test::sample_platform());

  TuningStore store(path, Mode::read_write);
  CHECK(store.schema_version() == sfc::schema::kVersion);
  const std::vector<sfc::Platform> platforms = store.platforms();
  REQUIRE(platforms.size() == 2);
  sfc::Platform twin = a;
  twin.l3_bytes = 0;
  const std::string hash = twin.hash();
  REQUIRE(store.platform(hash));
  CHECK(store.platform(hash)->compiler == "GCC 12.2.0");  // the first row's record stays
  // The twins' measurements joined (the one both held kept once), the winner chosen over both.
  CHECK(store.measurements({hash}).size() == 2);
  REQUIRE(store.winner({hash, sfc::DType::f32, 2, sfc::Layout::blocked, sfc::GemmShape{512, 512, 512}}));
  CHECK(store.winner({hash, sfc::DType::f32, 2, sfc::Layout::blocked, sfc::GemmShape{512, 512, 512}})
            ->k_layers == 2);
  CHECK(store.calibration(hash).gamma_gflops_per_core == 200);  // the newer one
  sfc::Platform rekeyed_other = other;
  rekeyed_other.l3_bytes = 0;
  CHECK(store
            .winner({rekeyed_other.hash(), sfc::DType::f32, 2, sfc::Layout::blocked,
                     sfc::GemmShape{512, 512, 512}})
            ->k_layers == 4);
}

TEST_CASE("store: the verdict on a database header is a pure function of one snapshot") {
  using sfc::schema::Snapshot;
  const auto version = [](Snapshot s) { return sfc::schema::version_of(s, "f.db"); };
  const auto refusal = [](Snapshot s) {
    try {
      sfc::schema::version_of(s, "f.db");
    } catch (const sfc::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  constexpr std::int64_t ours = sfc::schema::kApplicationId;
  CHECK(version({0, 0, 0}) == 0);  // empty: to be created
  CHECK(version({ours, 1, 9}) == 1);
  CHECK(version({ours, sfc::schema::kVersion, 9}) == sfc::schema::kVersion);
  CHECK(refusal({0, 0, 3}).find("another program") != std::string::npos);
  CHECK(refusal({0, 3, 9}).find("another program") != std::string::npos);
  CHECK(refusal({1234, 3, 9}).find("another program") != std::string::npos);
  CHECK(refusal({ours, sfc::schema::kVersion + 1, 9}).find("newer than") != std::string::npos);
  CHECK(refusal({ours, 0, 9}).find("which no sfc-tune writes") != std::string::npos);
}

TEST_CASE("store: calibrations are kept per platform") {
  TempDir dir("store");
  const std::string hash = sfc::test::sample_platform().hash();
  TuningStore store(dir.file("t.db"), Mode::create);
  store.upsert_platform(sfc::test::sample_platform());
  CHECK(store.calibration(hash).gamma_gflops_per_core == 0);
  CHECK_FALSE(store.calibration_time(hash));
  store.save_calibration(hash, {190.5, 30.25});
  store.save_calibration(hash, {195.5, 31.25});
  CHECK(store.calibration(hash).gamma_gflops_per_core == 195.5);
  CHECK(store.calibration(hash).beta_gbytes_per_s == 31.25);
  CHECK(store.table(hash).calibration.gamma_gflops_per_core == 195.5);
  CHECK_THROWS_AS(store.save_calibration(hash, {-1, 2}), sfc::Error);
  CHECK_THROWS_AS(store.save_calibration("0000000000000000", {1, 2}), sfc::Error);
}

TEST_CASE("store: a failing batch leaves nothing behind") {
  TempDir dir("store");
  const std::string hash = sfc::test::sample_platform().hash();
  TuningStore store(dir.file("t.db"), Mode::create);
  store.upsert_platform(sfc::test::sample_platform());
  CHECK_THROWS_AS(store.batch([&] {
    store.record(hash, std::vector<Measurement>{sample_measurement({64, 64, 64}, 1, 1, 1e-4, "t1")});
    throw sfc::Error("stop here");
  }),
                  sfc::Error);
  CHECK(store.measurements({hash}).empty());
  // A CHECK constraint (k_layers 9) fails the whole record() call.
  CHECK_THROWS_AS(
      store.record(hash, std::vector<Measurement>{sample_measurement({64, 64, 64}, 1, 1, 1e-4, "t1"),
                                                  sample_measurement({64, 64, 64}, 9, 1, 1e-4, "t2")}),
      sfc::Error);
  CHECK(store.measurements({hash}).empty());
}

TEST_CASE("store: readers in another connection see committed shapes while a writer works") {
  TempDir dir("store");
  const std::string hash = sfc::test::sample_platform().hash();
  TuningStore writer(dir.file("t.db"), Mode::create);
  writer.upsert_platform(sfc::test::sample_platform());
  writer.record(hash, std::vector<Measurement>{sample_measurement({64, 64, 64}, 1, 1, 1e-4, "t1")});
  writer.batch([&] {
    writer.record(hash, std::vector<Measurement>{sample_measurement({128, 64, 64}, 1, 1, 1e-4, "t2")});
    TuningStore reader(dir.file("t.db"), Mode::read_only);
    CHECK(reader.measurements({hash}).size() == 1);  // not the uncommitted shape, and no "locked"
  });
  CHECK(TuningStore(dir.file("t.db"), Mode::read_only).measurements({hash}).size() == 2);
}

TEST_CASE("store: files that are not tuning databases are refused and left untouched") {
  TempDir dir("store");
  SUBCASE("missing file, missing directory, a directory") {
    CHECK(open_error(dir.file("absent.db"), Mode::read_only).find("no tuning database") != std::string::npos);
    CHECK(open_error(dir.file("absent.db"), Mode::read_write).find("no tuning database") !=
          std::string::npos);
    CHECK(open_error(dir.file("no/dir/x.db"), Mode::create) != "");
    CHECK(open_error(dir.path().string(), Mode::create).find("directory") != std::string::npos);
  }
  SUBCASE("a text file") {
    const std::string path = dir.file("notes.txt");
    sfc::test::write_file(path, std::string(3000, 'x') + "\nnot a database\n");
    const std::string before = slurp(path);
    CHECK(open_error(path, Mode::create).find("not an SQLite database") != std::string::npos);
    CHECK(open_error(path, Mode::read_only) != "");
    CHECK(slurp(path) == before);
  }
  SUBCASE("another program's SQLite database") {
    const std::string path = dir.file("other.db");
    raw_sql(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    const std::string before = slurp(path);
    CHECK(open_error(path, Mode::create).find("another program") != std::string::npos);
    CHECK(slurp(path) == before);
  }
  SUBCASE("a newer schema") {
    const std::string path = dir.file("new.db");
    { TuningStore store(path, Mode::create); }
    raw_sql(path, "PRAGMA user_version = 99;");
    CHECK(open_error(path, Mode::read_write).find("newer") != std::string::npos);
    CHECK(open_error(path, Mode::read_only).find("newer") != std::string::npos);
  }
  SUBCASE("a corrupt database") {
    const std::string path = dir.file("corrupt.db");
    {
      TuningStore store(path, Mode::create);
      store.upsert_platform(sfc::test::sample_platform());
      std::vector<Measurement> rows;
      for (int i = 1; i <= 400; ++i) rows.push_back(sample_measurement({i, 64, 64}, 1, 1, 1e-4, "t"));
      store.record(sfc::test::sample_platform().hash(), rows);
    }
    raw_sql(path, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
    std::string bytes = slurp(path);
    REQUIRE(bytes.size() > 8192);
    // Scribble over the b-tree header of every page after the first (4 KiB pages).
    for (std::size_t page = 4096; page + 8 <= bytes.size(); page += 4096)
      for (std::size_t i = page; i < page + 8; ++i) bytes[i] = static_cast<char>(0xA5);
    sfc::test::write_file(path, bytes);
    CHECK(open_error(path, Mode::read_write).find("corrupt") != std::string::npos);
    CHECK(slurp(path) == bytes);
  }
  SUBCASE("an empty file becomes a database; read-only it is refused") {
    const std::string path = dir.file("empty.db");
    sfc::test::write_file(path, "");
    CHECK(open_error(path, Mode::read_only).find("empty") != std::string::npos);
    CHECK(open_error(path, Mode::read_write) == "");
  }
}

TEST_CASE(
    "store: a clean close leaves the database alone: no -wal, -shm or -claims file after writes or reads") {
  TempDir dir("store-sidefiles");
  const std::string db = dir.file("t.db");
  const sfc::Platform platform = sfc::test::sample_platform();
  const std::vector<Measurement> rows = {
      sample_measurement({256, 256, 256}, 1, 1, 2e-3, "2025-01-01T00:00:00.000001Z")};
  auto side_files = [&] {
    std::vector<std::string> found;
    for (const char* suffix : {"-wal", "-shm", "-claims", "-journal"})
      if (std::filesystem::exists(db + suffix)) found.push_back(suffix);
    return found;
  };
  {
    TuningStore store(db, Mode::create);
    store.upsert_platform(platform);
    store.record(platform.hash(), rows);
    const sfc::ShapeClaims claims(db);
    const sfc::ShapeClaims other(db);  // a second tuner on the same database
    CHECK(std::filesystem::exists(db + "-claims"));
  }
  CHECK(side_files().empty());
  {
    const TuningStore reader(db, Mode::read_only);
    CHECK(reader.tables().size() == 1);
    const TuningStore second(db, Mode::read_only);  // two readers, as two libsfcconf handles
    CHECK(second.platforms().size() == 1);
  }
  CHECK(side_files().empty());
  // A read-only open still refuses writes.
  sfc::Platform another = platform;
  another.cpu_model = "Another CPU";
  TuningStore reader(db, Mode::read_only);
  CHECK_THROWS_AS(reader.upsert_platform(another), sfc::Error);
  CHECK(reader.platforms().size() == 1);
}

TEST_CASE("store: the claims file outlives a tuner while another holds it, and claims stay exclusive") {
  TempDir dir("store-claims");
  const std::string db = dir.file("t.db");
  auto first = std::make_unique<sfc::ShapeClaims>(db);
  {
    sfc::ShapeClaims second(db);
    auto held = first->try_claim("256 256 256");
    REQUIRE(held);
    CHECK_FALSE(second.try_claim("256 256 256"));
  }
  CHECK(std::filesystem::exists(db + "-claims"));  // the first still has it
  sfc::ShapeClaims third(db);                      // opens the same file, so claims still exclude each other
  auto held = third.try_claim("512 512 512");
  REQUIRE(held);
  CHECK_FALSE(first->try_claim("512 512 512"));
  first.reset();
  CHECK(std::filesystem::exists(db + "-claims"));
}
