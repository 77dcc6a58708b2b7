// ShapeRecorder: counts, at GEMM-call time, every shape a program asks
// ConfigService (libsfcconf) or runs through sfc::gemm / AutoGemm, the C API
// or the drop-in BLAS, and writes the counts to a ShapeRecord file
// (sfc/shape_record.hpp) for `sfc-tune tune --from-record`.
//
//   SFC_RECORD=shapes.record ./my_program          # or ShapeRecorder::start(path)
//
// Counting costs a few nanoseconds and touches no lock and no file: each
// thread counts into a table of its own (a plain load and store per call, no
// atomic read-modify-write, no cache line shared with another thread). A
// background thread writes every couple of seconds and at exit. Writing
// merges with what the file holds already, so several processes may record
// into one file at once: under an exclusive flock of FILE.lock it re-reads
// the file, adds the calls counted since its last write, writes a temporary
// file and renames it over FILE. Nothing is counted twice or lost, and a
// reader sees the old file or the new one, never a torn line.
//
// One recorder is active per process (per copy of this library: libsfcconf,
// libsfcgemm and libsfcblas each carry their own, all of which may write one
// file). A recorder once started is never freed, so a thread still counting
// while it is stopped writes into memory that stays valid; calls counted
// after the final write are not written.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "sfc/shape_record.hpp"

namespace sfc {

class ShapeRecorder {
 public:
  // How often the background thread writes.
  static constexpr double kFlushSeconds = 2.0;

  // The active recorder, or null: one relaxed load, for the hot path.
  static ShapeRecorder* active() noexcept { return active_.load(std::memory_order_relaxed); }

  // Reads SFC_RECORD once per process (later calls return at once) and starts
  // recording into that file when it is set. A file that cannot be used is
  // reported on stderr ("sfc-record: ...") and nothing is recorded: a
  // program must not fail because its shapes cannot be counted.
  static void start_from_environment() noexcept;

  // Starts recording into `path` (a running recorder of another file is
  // stopped first, its counts written). Throws sfc::Error when `path` holds
  // something that is not a shape record, or when neither it nor its lock file
  // can be written: checked now, so the caller hears of it at once.
  static void start(const std::string& path);

  // Writes the active recorder's counts now; sfc::Error when the file cannot
  // be read or written (the counts are kept for the next write).
  static void flush_active();

  // Stops the active recorder after a last write (exit does it too); false
  // and a message on stderr when that write failed. No-op when none is active.
  static bool stop() noexcept;

  // Counts one call. Lock free; never throws.
  void count(const RecordKey& key, Tier tier, double distance) noexcept;

  const std::string& path() const;

  ShapeRecorder(const ShapeRecorder&) = delete;
  ShapeRecorder& operator=(const ShapeRecorder&) = delete;

 private:
  struct Impl;
  explicit ShapeRecorder(const std::string& path);
  ~ShapeRecorder();

  std::unique_ptr<Impl> impl_;
  static std::atomic<ShapeRecorder*> active_;
};

}  // namespace sfc
