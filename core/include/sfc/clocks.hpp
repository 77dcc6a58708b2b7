// The two clocks the microbenchmarks read (kernel rate, bandwidth, FMA peak).
#pragma once
#include <time.h>

namespace sfc {

// Seconds of CPU time the calling thread has used: time spent descheduled on
// a busy machine does not count, so a rate measured with it is a core's.
inline double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

// Monotonic wall-clock seconds.
inline double wall_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

}  // namespace sfc
