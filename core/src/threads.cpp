// The fork guard behind sfc/threads.hpp: the parent counts its threads as it
// forks, and the child remembers whether there were more than one.
#include "sfc/threads.hpp"

#include <omp.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace sfc {
namespace {

std::atomic<bool> forked_child{false};
std::atomic<int> threads_at_fork{0};

// The calling process's thread count from /proc/self/stat (field 20), or 2
// when it cannot be read (then the child is treated as unsafe). Only
// open/read/close: the prepare handler runs while other threads may hold locks.
int count_threads() noexcept {
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 2;
  char text[1024];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return 2;
  text[got] = '\0';
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const char* p = std::strrchr(text, ')');
  if (!p) return 2;
  for (int field = 2; field < 20 && *p; ++p)
    if (*p == ' ') ++field;
  const long threads = std::strtol(p, nullptr, 10);
  return threads > 0 ? int(threads) : 2;
}

// Registered when the library is loaded, before the program can fork.
[[gnu::constructor]] void watch_forks() {
  pthread_atfork([] { threads_at_fork.store(count_threads(), std::memory_order_relaxed); }, nullptr,
                 [] {
                   if (threads_at_fork.load(std::memory_order_relaxed) > 1)
                     forked_child.store(true, std::memory_order_relaxed);
                 });
}

}  // namespace

bool in_forked_child() noexcept { return forked_child.load(std::memory_order_relaxed); }

int default_threads() noexcept { return in_forked_child() ? 1 : omp_get_max_threads(); }

int usable_threads(int threads) noexcept { return in_forked_child() || threads < 1 ? 1 : threads; }

}  // namespace sfc
