// Workspace: the buffers a plan holds -- the K_layers-1 copies of C and
// gemm()'s packing buffers and per-thread panels -- reserved when the plan is
// built (those its decision's tight call needs) or on a call's first use.
// Private to core/.
#pragma once
#include "plan_impl.hpp"

namespace sfc {

// Throws sfc::Error if the copies of C would not fit this machine's memory;
// before anything is allocated or generated.
void check_scratch_fits(const GemmPlan::Impl& p);
// Allocates the copies of C (PlanDecision::scratch_bytes).
void reserve_scratch(GemmPlan::Impl& p);
// Allocates the packing buffers `copy` (in the caller's terms) needs that are
// not there yet, after checking that they fit. Not thread-safe, like the rest
// of a plan's use (one caller at a time).
void reserve_buffers(GemmPlan::Impl& p, const GemmCopies& copy);
// Bytes the plan holds now.
std::size_t held_bytes(const GemmPlan::Impl& p);

}  // namespace sfc
