// ShapeRecorder's two halves: the counting (per-thread tables, written only
// by their own thread) and the writing (a background thread that reads every
// table and merges the calls counted since its last write into the file).
//
// A slot of a thread's table is published once: its owner fills the key and
// then sets `state` with a release store; the writer reads `state` with an
// acquire load before it reads the key. After that the owner only bumps
// `calls` (a relaxed load and store: it is the only writer, so no atomic
// read-modify-write is needed) and rewrites the answer when it changes. The
// writer remembers per slot how many calls it has written (`written`,
// touched only under flush_mutex), so each write adds exactly the calls
// counted since the last successful one.
#include "sfc/shape_recorder.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "sfc/error.hpp"
#include "sfc/settings.hpp"
#include "sfc/text_file.hpp"

namespace sfc {
namespace {

using KeyWords = std::array<std::uint64_t, 4>;

KeyWords words_of(const RecordKey& key) noexcept {
  return {std::uint64_t(key.m), std::uint64_t(key.n), std::uint64_t(key.k),
          std::uint64_t(std::uint32_t(key.threads)) | std::uint64_t(key.dtype) << 32 |
              std::uint64_t(key.layout) << 40 | std::uint64_t(key.trans_a) << 48 |
              std::uint64_t(key.trans_b) << 56};
}

RecordKey key_of(const KeyWords& w) noexcept {
  RecordKey key;
  key.m = std::int64_t(w[0]);
  key.n = std::int64_t(w[1]);
  key.k = std::int64_t(w[2]);
  key.threads = int(std::uint32_t(w[3]));
  key.dtype = DType(w[3] >> 32 & 0xff);
  key.layout = Layout(w[3] >> 40 & 0xff);
  key.trans_a = RecordTranspose(w[3] >> 48 & 0xff);
  key.trans_b = RecordTranspose(w[3] >> 56 & 0xff);
  return key;
}

std::size_t hash_of(const KeyWords& w) noexcept {
  std::uint64_t h = 0;
  for (const std::uint64_t word : w) h = (h ^ word) * 0x9e3779b97f4a7c15ull;
  return std::size_t(h >> 32);
}

struct Slot {
  std::atomic<std::uint64_t> state{0};  // 0: empty; 1: the key below is published
  std::array<std::atomic<std::uint64_t>, 4> key{};
  std::atomic<std::uint64_t> tier{0};
  std::atomic<std::uint64_t> distance{0};  // the double's bits
  std::atomic<std::uint64_t> calls{0};
  std::uint64_t written = 0;  // calls already in the file; flush_mutex
};

// One thread's counts. 512 slots filled to 3/4 hold 384 distinct keys; a
// thread that runs more goes on in the overflow map (a mutex: slow, rare).
struct ThreadTable {
  static constexpr std::size_t kSlots = 512;
  static constexpr std::size_t kMaxUsed = kSlots * 3 / 4;
  std::array<Slot, kSlots> slots;
  std::size_t used = 0;           // the owner's
  std::atomic<bool> owned{true};  // false once its thread ended: another may take it over
};

// The calling thread's table and whose it is. Plain (trivially destructible)
// thread_locals, so the hot path pays no TLS-initialisation check; the
// destructor that hands the table back at thread exit is registered once per
// thread, on the slow path (TableReleaser).
thread_local const void* tls_owner = nullptr;
thread_local ThreadTable* tls_table = nullptr;

struct TableReleaser {
  ThreadTable* table = nullptr;
  ~TableReleaser() {
    if (table) table->owned.store(false, std::memory_order_release);
  }
};

// Start and stop are serialised; the hot path never takes this.
std::mutex& control_mutex() {
  static std::mutex* mutex = new std::mutex;  // never destroyed: exit handlers use it
  return *mutex;
}

// A file descriptor holding an exclusive flock, released on destruction.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot open the lock file " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd_);
      throw Error("cannot lock " + path + ": " + std::strerror(error));
    }
  }
  ~FileLock() { ::close(fd_); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// The record at `path` (empty when there is no file yet), read under the lock.
ShapeRecord read_record_or_empty(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (error) throw Error("cannot read " + path + ": " + error.message());
    return {};
  }
  return ShapeRecord::load(path);
}

}  // namespace

std::atomic<ShapeRecorder*> ShapeRecorder::active_{nullptr};

struct ShapeRecorder::Impl {
  explicit Impl(std::string p) : path(std::move(p)), lock_path(path + ".lock") {}

  const std::string path, lock_path;

  std::mutex registry_mutex;  // guards tables (adding, walking)
  std::vector<std::unique_ptr<ThreadTable>> tables;

  struct OverflowCount {
    std::uint64_t calls = 0, written = 0;
    Tier tier = Tier::default_config;
    double distance = 0;
  };
  std::mutex overflow_mutex;
  std::map<RecordKey, OverflowCount> overflow;

  std::mutex flush_mutex;  // one write at a time; guards every `written`

  std::mutex wake_mutex;
  std::condition_variable wake;
  bool stopping = false;  // wake_mutex
  std::thread* writer = nullptr;
  bool writer_in_parent = false;  // in a forked child: the thread stayed in the parent, not to be joined

  // The calling thread's table: one it ran before, one a finished thread
  // left, or a new one. Null when there is no memory for one.
  ThreadTable* attach() noexcept {
    try {
      const std::lock_guard lock(registry_mutex);
      ThreadTable* table = nullptr;
      for (const auto& t : tables) {
        bool owned = false;
        if (t->owned.compare_exchange_strong(owned, true, std::memory_order_acq_rel)) {
          table = t.get();
          break;
        }
      }
      if (!table) {
        tables.push_back(std::make_unique<ThreadTable>());
        table = tables.back().get();
      }
      static thread_local TableReleaser releaser;
      if (releaser.table)
        releaser.table->owned.store(false, std::memory_order_release);  // an older recorder's
      releaser.table = table;
      tls_owner = this;
      tls_table = table;
      return table;
    } catch (...) {
      return nullptr;
    }
  }

  void count_overflow(const RecordKey& key, Tier tier, double distance) noexcept {
    try {
      const std::lock_guard lock(overflow_mutex);
      OverflowCount& c = overflow[key];
      ++c.calls;
      c.tier = tier;
      c.distance = distance;
    } catch (...) {
      // No memory for one more key: this call goes uncounted rather than failing the GEMM.
    }
  }

  // Adds the calls counted since the last write to the file.
  void flush() {
    const std::lock_guard flush_lock(flush_mutex);
    ShapeRecord delta;
    struct Pending {
      Slot* slot;
      std::uint64_t calls;
    };
    std::vector<Pending> pending;
    {
      const std::lock_guard lock(registry_mutex);
      for (const auto& table : tables)
        for (Slot& slot : table->slots) {
          if (slot.state.load(std::memory_order_acquire) == 0) continue;
          const std::uint64_t calls = slot.calls.load(std::memory_order_relaxed);
          if (calls == slot.written) continue;
          KeyWords w;
          for (std::size_t i = 0; i < w.size(); ++i) w[i] = slot.key[i].load(std::memory_order_relaxed);
          delta.add({key_of(w), calls - slot.written, Tier(slot.tier.load(std::memory_order_relaxed)),
                     std::bit_cast<double>(slot.distance.load(std::memory_order_relaxed))});
          pending.push_back({&slot, calls});
        }
    }
    std::vector<std::pair<OverflowCount*, std::uint64_t>> pending_overflow;
    {
      const std::lock_guard lock(overflow_mutex);
      for (auto& [key, c] : overflow)
        if (c.calls != c.written) {
          delta.add({key, c.calls - c.written, c.tier, c.distance});
          pending_overflow.emplace_back(&c, c.calls);
        }
    }
    if (delta.shapes().empty()) return;
    {
      const FileLock lock(lock_path);
      ShapeRecord merged = read_record_or_empty(path);
      for (const RecordedShape& s : delta.shapes()) merged.add(s);
      write_text_file_atomically(path, merged.format());
    }
    for (const Pending& p : pending) p.slot->written = p.calls;
    const std::lock_guard lock(overflow_mutex);
    for (auto& [c, calls] : pending_overflow) c->written = calls;
  }

  // The background writer: a write every kFlushSeconds until stopped. A
  // failure is reported once (not every two seconds) and the counts wait for
  // the next write.
  void run_writer() {
    std::string reported;
    std::unique_lock lock(wake_mutex);
    while (!stopping) {
      wake.wait_for(lock, std::chrono::duration<double>(kFlushSeconds), [&] { return stopping; });
      if (stopping) break;
      lock.unlock();
      try {
        flush();
        reported.clear();
      } catch (const std::exception& e) {
        if (reported != e.what()) {
          std::fprintf(stderr, "sfc-record: %s (the counts are kept and written again later)\n", e.what());
          reported = e.what();
        }
      }
      lock.lock();
    }
  }

  void start_writer() {
    writer = new std::thread([this] { run_writer(); });
  }

  void stop_writer() noexcept {
    {
      const std::lock_guard lock(wake_mutex);
      stopping = true;
    }
    wake.notify_all();
    if (writer && !writer_in_parent && writer->joinable()) writer->join();
  }

  // After fork(), in the child: the parent writes what was counted before,
  // so the child starts from zero, and it has no writer thread (it writes
  // at exit()).
  void forget_for_child() noexcept {
    for (const auto& table : tables)
      for (Slot& slot : table->slots) slot.written = slot.calls.load(std::memory_order_relaxed);
    for (auto& [key, c] : overflow) c.written = c.calls;
    // The thread is the parent's; its object is kept (reachable, never joined).
    writer_in_parent = true;
  }
};

ShapeRecorder::ShapeRecorder(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
ShapeRecorder::~ShapeRecorder() = default;

const std::string& ShapeRecorder::path() const { return impl_->path; }

void ShapeRecorder::count(const RecordKey& key, Tier tier, double distance) noexcept {
  Impl& impl = *impl_;
  ThreadTable* table = tls_table;
  if (tls_owner != &impl) [[unlikely]] {
    table = impl.attach();
    if (!table) return impl.count_overflow(key, tier, distance);
  }
  const KeyWords w = words_of(key);
  const std::uint64_t answer = std::uint64_t(tier);
  const std::uint64_t distance_bits = std::bit_cast<std::uint64_t>(distance);
  std::size_t i = hash_of(w);
  for (std::size_t probe = 0; probe < ThreadTable::kSlots; ++probe, ++i) {
    Slot& slot = table->slots[i % ThreadTable::kSlots];
    if (slot.state.load(std::memory_order_relaxed) == 0) {
      if (table->used >= ThreadTable::kMaxUsed) break;
      for (std::size_t j = 0; j < w.size(); ++j) slot.key[j].store(w[j], std::memory_order_relaxed);
      slot.tier.store(answer, std::memory_order_relaxed);
      slot.distance.store(distance_bits, std::memory_order_relaxed);
      slot.calls.store(slot.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      slot.state.store(1, std::memory_order_release);
      ++table->used;
      return;
    }
    if (slot.key[0].load(std::memory_order_relaxed) == w[0] &&
        slot.key[1].load(std::memory_order_relaxed) == w[1] &&
        slot.key[2].load(std::memory_order_relaxed) == w[2] &&
        slot.key[3].load(std::memory_order_relaxed) == w[3]) {
      slot.calls.store(slot.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      if (slot.tier.load(std::memory_order_relaxed) != answer)
        slot.tier.store(answer, std::memory_order_relaxed);
      if (slot.distance.load(std::memory_order_relaxed) != distance_bits)
        slot.distance.store(distance_bits, std::memory_order_relaxed);
      return;
    }
  }
  impl.count_overflow(key, tier, distance);
}

void ShapeRecorder::start(const std::string& path) {
  if (path.empty()) throw Error("the shape record's file name is empty");
  const std::lock_guard control(control_mutex());
  if (ShapeRecorder* current = active(); current && current->path() == path) return;
  {
    // Refuse at once what a write would refuse later: a file that is not a
    // record (someone's data, given by mistake), a directory without write access.
    const FileLock lock(path + ".lock");
    read_record_or_empty(path);
  }
  // Never deleted: threads may still hold it after it is stopped (see the
  // header). Kept in a list a global reaches, so a leak checker knows it is kept on purpose.
  static auto* every_recorder = new std::vector<ShapeRecorder*>;
  auto* recorder = new ShapeRecorder(path);
  every_recorder->push_back(recorder);
  recorder->impl_->start_writer();

  // fork(): the active recorder's locks are held across it, so that the child
  // never inherits a lock taken by a thread that does not exist there.
  static Impl* forking = nullptr;
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    std::atexit([] { ShapeRecorder::stop(); });
    pthread_atfork(
        [] {
          control_mutex().lock();
          ShapeRecorder* r = ShapeRecorder::active();
          forking = r ? r->impl_.get() : nullptr;
          if (forking) {
            forking->flush_mutex.lock();
            forking->registry_mutex.lock();
            forking->overflow_mutex.lock();
          }
        },
        [] {
          if (forking) {
            forking->overflow_mutex.unlock();
            forking->registry_mutex.unlock();
            forking->flush_mutex.unlock();
          }
          control_mutex().unlock();
        },
        [] {
          if (forking) {
            forking->forget_for_child();
            forking->overflow_mutex.unlock();
            forking->registry_mutex.unlock();
            forking->flush_mutex.unlock();
          }
          control_mutex().unlock();
        });
  });

  ShapeRecorder* previous = active_.exchange(recorder, std::memory_order_acq_rel);
  if (previous) {
    previous->impl_->stop_writer();
    try {
      previous->impl_->flush();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sfc-record: %s: the last counts are lost: %s\n", previous->path().c_str(),
                   e.what());
    }
  }
}

void ShapeRecorder::start_from_environment() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::optional<std::string> path = sfc::setting_text("SFC_RECORD");
    if (!path) return;
    try {
      start(*path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sfc-record: SFC_RECORD=%s: %s; not recording\n", path->c_str(), e.what());
    }
  });
}

void ShapeRecorder::flush_active() {
  const std::lock_guard control(control_mutex());
  if (ShapeRecorder* r = active()) r->impl_->flush();
}

bool ShapeRecorder::stop() noexcept {
  const std::lock_guard control(control_mutex());
  ShapeRecorder* r = active_.exchange(nullptr, std::memory_order_acq_rel);
  if (!r) return true;
  r->impl_->stop_writer();
  try {
    r->impl_->flush();
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sfc-record: the last counts of this process are lost: %s\n", e.what());
    return false;
  }
}

}  // namespace sfc
