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

// True in a process forked from a parent that had more than one thread.
bool in_forked_child() noexcept;

// The thread count a call takes when its caller names none: omp_get_max_threads(),
// or 1 in a forked child (see above).
int default_threads() noexcept;

// `threads` as a team may have it here: at least 1, and 1 in a forked child.
int usable_threads(int threads) noexcept;

}  // namespace sfc
