#include "fault_injection.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include "sfc/error.hpp"
#include "sfc/settings.hpp"

namespace sfc::fault {
namespace {

enum class Point { none, write, torn_write, sync, before_commit, after_commit, fail_write, full };

struct Spec {
  bool count = false;  // SFC_FAULT=count
  int signal = 0;      // what a crash or signal point raises: SIGKILL, SIGINT, SIGTERM or SIGHUP
  Point point = Point::none;
  std::int64_t n = 0;  // 1-based
};

Spec parse(std::string_view text) {
  if (text == "count") return {.count = true};
  struct Name {
    std::string_view text;
    int signal;
    Point point;
  };
  static constexpr Name kActions[] = {{"crash:", SIGKILL, Point::none},
                                      {"sigint:", SIGINT, Point::none},
                                      {"sigterm:", SIGTERM, Point::none},
                                      {"sighup:", SIGHUP, Point::none},
                                      {"io:", 0, Point::none}};
  static constexpr Name kPoints[] = {
      {"write:", 0, Point::write},
      {"torn-write:", SIGKILL, Point::torn_write},
      {"sync:", 0, Point::sync},
      {"before-commit:", 0, Point::before_commit},
      {"after-commit:", 0, Point::after_commit},
      {"fail-write:", 0, Point::fail_write},
      {"full:", 0, Point::full},
  };
  for (const Name& action : kActions) {
    if (!text.starts_with(action.text)) continue;
    const std::string_view rest = text.substr(action.text.size());
    for (const Name& point : kPoints) {
      if (!rest.starts_with(point.text)) continue;
      // io: goes with the two failures only; a torn write is a crash only.
      const bool io_point = point.point == Point::fail_write || point.point == Point::full;
      if ((action.signal == 0) != io_point || (point.signal != 0 && point.signal != action.signal)) break;
      const std::string_view number = rest.substr(point.text.size());
      std::int64_t n = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
      if (ec == std::errc{} && end == number.data() + number.size() && n >= 1)
        return {false, action.signal, point.point, n};
      break;
    }
    break;
  }
  throw Error("SFC_FAULT='" + std::string(text) +
              "': expected count, crash:{write,torn-write,sync,before-commit,after-commit}:N, "
              "sig{int,term,hup}:{write,sync,before-commit,after-commit}:N or io:{fail-write,full}:N "
              "with N >= 1");
}

Spec spec;
std::atomic<std::int64_t> writes{0}, syncs{0}, commits{0};

// The point is reached. SIGKILL is what a kill -9 at this instant leaves
// behind: no destructor, no flush, no atexit handler (the count report
// included). The others are delivered to this thread before raise() returns,
// as if a user had sent them at this instant.
void hit() {
  ::raise(spec.signal);
  if (spec.signal == SIGKILL) std::abort();  // not reached
}

void report_counts() {
  std::fprintf(stderr, "sfc-fault: %lld writes, %lld syncs, %lld commits\n",
               static_cast<long long>(writes.load()), static_cast<long long>(syncs.load()),
               static_cast<long long>(commits.load()));
}

// The VFS shim: each file the default VFS opens is wrapped in a FaultFile
// whose methods count, maybe fail or crash, and forward to the real file
// (which lives right behind the wrapper, in the space SQLite allocates).
sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs fault_vfs;

struct FaultFile {
  sqlite3_file base;  // pMethods: the wrapper's methods
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
FaultFile* of(sqlite3_file* file) { return reinterpret_cast<FaultFile*>(file); }
const sqlite3_io_methods* real_methods(sqlite3_file* file) { return of(file)->real()->pMethods; }

int on_write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  const std::int64_t n = ++writes;
  if (spec.point == Point::write && n == spec.n) hit();
  if (spec.point == Point::torn_write && n == spec.n) {
    real_methods(file)->xWrite(of(file)->real(), data, amount / 2, offset);
    hit();
  }
  if (spec.point == Point::fail_write && n == spec.n) return SQLITE_IOERR_WRITE;
  if (spec.point == Point::full && n >= spec.n) return SQLITE_FULL;
  return real_methods(file)->xWrite(of(file)->real(), data, amount, offset);
}

int on_sync(sqlite3_file* file, int flags) {
  if (++syncs == spec.n && spec.point == Point::sync) hit();
  return real_methods(file)->xSync(of(file)->real(), flags);
}

int on_close(sqlite3_file* file) {
  const int code = real_methods(file)->xClose(of(file)->real());
  file->pMethods = nullptr;
  return code;
}

// Every other method forwards as it is.
#define SFC_FORWARD(method, params, args) [] params { return real_methods(file)->method args; }
const sqlite3_io_methods fault_methods = {
    3,
    on_close,
    SFC_FORWARD(xRead, (sqlite3_file * file, void* data, int amount, sqlite3_int64 offset),
                (of(file)->real(), data, amount, offset)),
    on_write,
    SFC_FORWARD(xTruncate, (sqlite3_file * file, sqlite3_int64 size), (of(file)->real(), size)),
    on_sync,
    SFC_FORWARD(xFileSize, (sqlite3_file * file, sqlite3_int64* size), (of(file)->real(), size)),
    SFC_FORWARD(xLock, (sqlite3_file * file, int lock), (of(file)->real(), lock)),
    SFC_FORWARD(xUnlock, (sqlite3_file * file, int lock), (of(file)->real(), lock)),
    SFC_FORWARD(xCheckReservedLock, (sqlite3_file * file, int* out), (of(file)->real(), out)),
    SFC_FORWARD(xFileControl, (sqlite3_file * file, int op, void* arg), (of(file)->real(), op, arg)),
    SFC_FORWARD(xSectorSize, (sqlite3_file * file), (of(file)->real())),
    SFC_FORWARD(xDeviceCharacteristics, (sqlite3_file * file), (of(file)->real())),
    // Shared memory (WAL) and mmap are version 2 and 3 methods: the unix VFS
    // has both; another default VFS without them gets the answers SQLite
    // expects of one that lacks them.
    [](sqlite3_file* file, int page, int size, int extend, void volatile** out) {
      if (real_methods(file)->iVersion < 2) return SQLITE_IOERR_SHMMAP;
      return real_methods(file)->xShmMap(of(file)->real(), page, size, extend, out);
    },
    [](sqlite3_file* file, int offset, int n, int flags) {
      if (real_methods(file)->iVersion < 2) return SQLITE_IOERR_SHMLOCK;
      return real_methods(file)->xShmLock(of(file)->real(), offset, n, flags);
    },
    [](sqlite3_file* file) {
      if (real_methods(file)->iVersion >= 2) real_methods(file)->xShmBarrier(of(file)->real());
    },
    [](sqlite3_file* file, int remove) {
      if (real_methods(file)->iVersion < 2) return SQLITE_OK;
      return real_methods(file)->xShmUnmap(of(file)->real(), remove);
    },
    [](sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
      if (real_methods(file)->iVersion < 3) {
        *out = nullptr;  // "read it with xRead instead"
        return SQLITE_OK;
      }
      return real_methods(file)->xFetch(of(file)->real(), offset, amount, out);
    },
    [](sqlite3_file* file, sqlite3_int64 offset, void* page) {
      if (real_methods(file)->iVersion < 3) return SQLITE_OK;
      return real_methods(file)->xUnfetch(of(file)->real(), offset, page);
    },
};
#undef SFC_FORWARD

int open_file(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  FaultFile* wrapper = of(file);
  const int code = real_vfs->xOpen(real_vfs, name, wrapper->real(), flags, out_flags);
  // SQLite calls xClose only when pMethods is set: set it only when the real file opened.
  wrapper->base.pMethods = wrapper->real()->pMethods ? &fault_methods : nullptr;
  return code;
}

}  // namespace

void install() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const std::optional<std::string> text = sfc::setting_text("SFC_FAULT");
    if (!text) return;
    try {
      spec = parse(*text);
    } catch (const Error& e) {
      failure = e.what();
      return;
    }
    if (spec.count) std::atexit(report_counts);
    real_vfs = sqlite3_vfs_find(nullptr);
    fault_vfs = *real_vfs;
    fault_vfs.zName = "sfc-fault";
    fault_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + real_vfs->szOsFile;
    fault_vfs.xOpen = open_file;
    sqlite3_vfs_register(&fault_vfs, 1);  // the default for every open from now on
  });
  if (!failure.empty()) throw Error(failure);
}

void before_commit() {
  if (spec.point == Point::before_commit && commits.load() + 1 == spec.n) hit();
}

void after_commit() {
  if (++commits == spec.n && spec.point == Point::after_commit) hit();
}

}  // namespace sfc::fault
