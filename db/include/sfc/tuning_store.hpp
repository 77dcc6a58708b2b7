// TuningStore: every measurement the tuner takes, in one SQLite file (WAL mode,
// versioned schema, one transaction per recorded shape), and the winners and
// tuning tables derived from them.
//
//   sfc::TuningStore store("sfc-tune.db", sfc::TuningStore::Mode::create);
//   store.upsert_platform(platform);
//   store.record(platform.hash(), shape_measurements);   // one transaction
//   sfc::TuningTable table = store.table(platform.hash(), sfc::DType::f32, 2, sfc::Layout::row_major);
//
// Several processes may read while one writes. A database of a newer schema,
// of another program, or a corrupt one is refused with an sfc::Error and never
// written to. The schema and views are documented in db/src/schema.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/platform.hpp"
#include "sfc/records.hpp"
#include "sfc/tuning_table.hpp"

namespace sfc {

// What one platform's results hold, per dtype, thread count and layout (for `db info`).
struct ResultGroup {
  DType dtype = DType::f32;
  int threads = 0;
  Layout layout = Layout::blocked;
  std::int64_t shapes = 0;        // with at least one measurement
  std::int64_t tuned_shapes = 0;  // with a winner
  std::int64_t measurements = 0;
};

// Which of one platform's results a read selects; a field left unset selects
// every value. `hash`: all of the platform's; `{hash, DType::f32, 2,
// Layout::row_major}`: one thread count's row-major fp32 results; add
// `GemmShape{m, n, k}` for one shape.
struct ResultFilter {
  ResultFilter(std::string hash) : platform_hash(std::move(hash)) {}  // NOLINT: implicit on purpose
  ResultFilter(std::string hash, DType d, int t, Layout l, std::optional<GemmShape> s = std::nullopt)
      : platform_hash(std::move(hash)), dtype(d), threads(t), layout(l), shape(s) {}

  std::string platform_hash;
  std::optional<DType> dtype;
  std::optional<int> threads;
  std::optional<Layout> layout;
  std::optional<GemmShape> shape;
};

// True when `path` starts with SQLite's 16-byte header (a database, to be
// opened as a TuningStore); false for anything else, unreadable files included.
bool has_sqlite_header(const std::string& path);

// Throws sfc::Error("<option>: the output ... is <which> of the database ...")
// when `output` names the database `database` itself or one of the files
// SQLite and the tuner keep beside it (-wal, -shm, -journal, -claims): writing
// there destroys committed results. Also refused: such a companion name of
// any other existing database (SQLite would take the file for its own). The
// one check every command that writes an output next to a database makes
// before it writes anything (`database` may be empty).
void refuse_database_file_as_output(const std::string& output, const std::string& database,
                                    const std::string& option);

class TuningStore {
 public:
  enum class Mode {
    read_only,   // the file must exist; never written
    read_write,  // the file must exist; an older schema is migrated
    create,      // read_write, creating the file when it is absent
  };

  TuningStore(const std::string& path, Mode mode);
  ~TuningStore();
  TuningStore(TuningStore&&) noexcept;
  TuningStore& operator=(TuningStore&&) noexcept;

  const std::string& path() const;
  int schema_version() const;

  std::vector<Platform> platforms() const;
  std::optional<Platform> platform(const std::string& hash) const;
  // Adds the platform if its hash is new; throws if a platform of other
  // identity fields already holds that hash (the recorded compiler and
  // LIBXSMM version of the first stay).
  void upsert_platform(const Platform& platform);

  // Records measurements in one transaction (or inside the open batch); a
  // measurement already present (same configuration, kind and time stamp) is
  // skipped. The platform must have been upserted. Returns the rows added.
  std::int64_t record(const std::string& platform_hash, std::span<const Measurement> measurements);

  // Runs `body` in one transaction: everything it records lands, or nothing.
  template <class Body>
  void batch(Body&& body) {
    begin_batch();
    try {
      body();
    } catch (...) {
      abandon_batch();
      throw;
    }
    commit_batch();
  }

  // Runs `body` with every read inside one snapshot of the database: what
  // other processes commit meanwhile is not seen, so reads that belong
  // together (a platform, its calibration, times and winners) agree. Nests,
  // and inside batch() the batch's transaction is the snapshot.
  template <class Body>
  decltype(auto) snapshot(Body&& body) const {
    struct End {
      const TuningStore& store;
      bool began;
      ~End() { store.end_read(began); }
    } end{*this, begin_read()};
    return body();
  }

  // The measurements and winners `filter` selects, ordered by shape, then
  // configuration. Each entry layout is tuned on its own (db/src/schema.cpp,
  // version 3), so a filter without a layout mixes the layouts' results.
  std::vector<Measurement> measurements(const ResultFilter& filter) const;
  std::vector<Winner> winners(const ResultFilter& filter) const;
  // The one winner of a filter that names a shape, dtype, threads and layout.
  std::optional<Winner> winner(const ResultFilter& filter) const;
  std::vector<ResultGroup> result_groups(const std::string& platform_hash) const;

  void save_calibration(const std::string& platform_hash, const Calibration& calibration);
  void save_calibration(const std::string& platform_hash, const Calibration& calibration,
                        const std::string& measured_at);
  Calibration calibration(const std::string& platform_hash) const;  // zeros when none is stored
  std::optional<std::string> calibration_time(const std::string& platform_hash) const;

  // The winners with the times of all 64 configurations, ordered by M, N, K.
  TuningTable table(const std::string& platform_hash, DType dtype, int threads, Layout layout) const;
  TuningTable table(const std::string& platform_hash) const;  // every dtype, thread count and layout
  std::vector<TuningTable> tables() const;                    // every platform's, in one snapshot

 private:
  struct Impl;
  void begin_batch();
  void commit_batch();
  void abandon_batch() noexcept;
  bool begin_read() const;  // true when this call opened the read transaction
  void end_read(bool began) const noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sfc
