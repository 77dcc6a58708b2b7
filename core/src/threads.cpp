// The fork guard behind sfc/threads.hpp: the parent counts its threads as it
// forks, and the child remembers whether there were more than one.
#include "sfc/threads.hpp"

#include "sfc/error.hpp"
#include "sfc/settings.hpp"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

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

int default_threads() noexcept {
  if (in_forked_child()) return 1;
  const int asked = omp_get_max_threads();
  if (asked >= 1 && asked <= kMaxThreads) return asked;
  static const int processors = [asked] {
    const int n = std::clamp(omp_get_num_procs(), 1, kMaxThreads);
    std::fprintf(stderr, "sfc-tune: OMP_NUM_THREADS asks for %d threads, more than %d; running on %d\n",
                 asked, kMaxThreads, n);
    return n;
  }();
  return processors;
}

void check_thread_environment() {
  const char* text = sfc::setting_value("OMP_NUM_THREADS");
  if (!text || !*text) return;
  // libgomp takes "N" or a list "N,M,..." (one count per nesting level), spaces
  // around each count allowed: the first is the team's.
  std::string_view first = std::string_view(text).substr(0, std::string_view(text).find(','));
  constexpr std::string_view kSpaces = " \t\n\v\f\r";
  first.remove_prefix(std::min(first.size(), first.find_first_not_of(kSpaces)));
  first = first.substr(0, first.find_last_not_of(kSpaces) + 1);
  int value = 0;
  const auto [end, error] = std::from_chars(first.data(), first.data() + first.size(), value);
  if (error != std::errc() || end != first.data() + first.size() || value < 1 || value > kMaxThreads)
    refuse_setting("OMP_NUM_THREADS", text);  // an error: libgomp would start that team
}

int usable_threads(int threads) noexcept { return in_forked_child() || threads < 1 ? 1 : threads; }

}  // namespace sfc
