// SIGINT (Ctrl-C), SIGTERM (Slurm's time limit, kill, timeout) and SIGHUP (the
// terminal or ssh session went away) turned into a request to stop between
// units of work, for the commands that can end early without losing what they
// finished: `tune` commits it, `bench` reports it.
#pragma once
#include <atomic>

namespace sfc::cli {

// While one lives, the first of those signals writes `message` (a string
// literal: the handler only copies it out) to stderr and sets stop_requested();
// the handler then puts the default back (SA_RESETHAND), so a second signal
// ends the process at once. One at a time; the destructor restores what was
// installed before.
class StopOnSignals {
 public:
  explicit StopOnSignals(const char* message);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

// Set by the first signal; what the work loops poll (the tuner's and bench's
// `stop`). Cleared when a StopOnSignals is made.
const std::atomic<bool>* stop_requested();

// 128 + the first signal since the last StopOnSignals was made (SIGINT if
// none came): the exit code a shell reports for a process the signal ended.
int interrupted_exit_code();

}  // namespace sfc::cli
