// The thread team a GEMM call runs on.
//
// Every parallel part of a call (packing, the SFC-CA loop, the reduction,
// unpacking C) is written once, as code for one member of a team: its loops
// are orphaned worksharing constructs (`omp for`), which bind to whichever
// team runs them. run_on_team() opens that team, or skips it: a team of one
// costs libgomp a team's set-up and tear-down all the same, 1.2 us a region
// on the 2-core Zen 5 guest (3.1 us for two threads; a direct call 0.003 us),
// which is most of a 64^3 GEMM (4.4 us warm on one thread) and ten times a
// 16^3 one. Measured with a loop of empty `omp parallel num_threads(n)`
// regions and of `omp parallel if(false)`, 200000 calls each.
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
