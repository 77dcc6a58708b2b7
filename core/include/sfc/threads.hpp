// How many threads a GEMM may use in this process.
//
// After fork() the child holds only the thread that forked. libgomp's pool of
// workers belongs to the parent: a team of more than one thread opened in the
// child waits forever for workers that were not copied. The engine cannot see
// whether another library (a framework, an OpenMP BLAS) left such a pool, so
// a child forked from a process that ran more than one thread runs every
// parallel region on one thread, until it execs.
#pragma once

namespace sfc {

// The most threads one call (and --threads) takes.
inline constexpr int kMaxThreads = 4096;

// True in a process forked from a parent that had more than one thread.
bool in_forked_child() noexcept;

// The thread count of a call that names none: 1 in a forked child (see
// above); else OMP_NUM_THREADS's (omp_get_max_threads()) where it lies in
// 1..kMaxThreads, otherwise this machine's processors and a one-line warning
// on stderr, once per process. Every parallel region of a run is opened with a
// count from here or the run's own.
int default_threads() noexcept;

// OMP_NUM_THREADS checked as --threads is: nothing when it is unset or empty;
// sfc::Error naming the value when its first count is not a whole number in
// 1..kMaxThreads (a team of 100,000 threads crashes the OpenMP runtime).
void check_thread_environment();

// `threads` as a team may have it here: at least 1, and 1 in a forked child.
int usable_threads(int threads) noexcept;

}  // namespace sfc
