#include "stop_on_signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <iterator>

namespace sfc::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the first that asked
std::atomic<const char*> g_message{nullptr};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<const char*>::is_always_lock_free,
              "the signal handler needs lock-free flags");

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kSignals)]{};

// Only async-signal-safe calls here: atomics, strlen and write.
extern "C" void request_stop(int signal) {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal);
  g_stop.store(true);
  const char* message = g_message.load();
  if (message == nullptr) return;
  [[maybe_unused]] const ssize_t ignored = write(STDERR_FILENO, message, std::strlen(message));
}

}  // namespace

StopOnSignals::StopOnSignals(const char* message) {
  g_stop.store(false);
  g_signal.store(0);
  g_message.store(message);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &g_previous[i]);
}

StopOnSignals::~StopOnSignals() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

const std::atomic<bool>* stop_requested() { return &g_stop; }

int interrupted_exit_code() { return 128 + (g_signal.load() ? g_signal.load() : SIGINT); }

}  // namespace sfc::cli
