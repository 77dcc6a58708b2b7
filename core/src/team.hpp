// The thread team a GEMM call runs on.
//
// Every parallel part of a call (packing, the SFC-CA loop, the reduction,
// unpacking C) is written once, as code for one member of a team: its loops
// are orphaned worksharing constructs (`omp for`), which bind to whichever
// team runs them. run_on_team() opens that team, or skips it: a team of one
// costs libgomp a team's set-up and tear-down all the same, which is most of
// a tiny GEMM (docs/experiments/2026-12-04-thread-team-zen5.md).
//
// The call runs without a region only at nesting level 0: inside a caller's
// own parallel region an orphaned `omp for` would bind to the caller's team
// and hand this thread only its share of the iterations. There a region of
// one thread is opened instead (nested regions are inactive by default: a
// team of one), as before. In a forked child every team is of one thread
// (sfc/threads.hpp).
#pragma once
#include <omp.h>

#include "sfc/threads.hpp"

namespace sfc {

template <class Body>
void run_on_team(int threads, Body&& body) {
  threads = usable_threads(threads);
  if (threads <= 1 && omp_get_level() == 0) {
    body();
    return;
  }
#pragma omp parallel num_threads(threads)
  body();
}

}  // namespace sfc
