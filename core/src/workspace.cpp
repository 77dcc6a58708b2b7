// Workspace (workspace.hpp): the plan's buffers, after checking that they fit.
#include "workspace.hpp"

#include <unistd.h>

#include <new>
#include <string>

namespace sfc {
namespace {

// Throws before allocating what the machine cannot hold: a clear message beats
// the OOM killer. `bytes` is computed in double so huge shapes cannot overflow.
void check_fits(double bytes, const std::string& what) {
  const double physical = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && bytes > physical)
    throw Error(what + " needs " + std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                " MiB, more than this machine's " +
                std::to_string(static_cast<long long>(physical / (1 << 20))) + " MiB of memory");
}

}  // namespace

void check_scratch_fits(const GemmPlan::Impl& p) {
  const double c_bytes = double(p.c_elements()) * double(output_size(p.dtype));
  check_fits(c_bytes * (p.layers - 1), "the plan's copies of C");  // packing buffers: reserve_buffers
}

void reserve_scratch(GemmPlan::Impl& p) {
  try {
    p.scratch = AlignedBuffer(p.decision.scratch_bytes);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating the plan's workspace");
  }
}

std::size_t held_bytes(const GemmPlan::Impl& p) {
  return p.scratch.bytes() + p.a_packed.bytes() + p.b_packed.bytes() + p.c_packed.bytes() +
         p.a_panels.bytes() + p.b_panels.bytes();
}

void reserve_buffers(GemmPlan::Impl& p, const GemmCopies& copy) {
  // The caller's A is the loop's B in a transposed plan, and B the loop's A.
  const std::size_t in = input_size(p.dtype);
  const std::size_t a_bytes = (p.transposed ? p.b_elements() : p.a_elements()) * in;
  const std::size_t b_bytes = (p.transposed ? p.a_elements() : p.b_elements()) * in;
  const std::size_t c_bytes = p.c_elements() * output_size(p.dtype);
  // An operand the plan packs panel by panel (Impl::panels_a) needs per-thread
  // panels of the loop's A or B instead of a whole packed copy.
  const bool a_in_panels = copy.a && packs_in_panels(p, Operand::a);
  const bool b_in_panels = copy.b && packs_in_panels(p, Operand::b);
  const bool loop_a_panels = p.transposed ? b_in_panels : a_in_panels;
  const bool loop_b_panels = p.transposed ? a_in_panels : b_in_panels;
  const std::size_t threads = std::size_t(p.threads);
  struct Need {
    bool wanted;
    AlignedBuffer& buffer;
    std::size_t bytes;
  };
  Need needs[] = {{copy.a && !a_in_panels, p.a_packed, a_bytes},
                  {copy.b && !b_in_panels, p.b_packed, b_bytes},
                  {copy.c, p.c_packed, c_bytes},
                  {loop_a_panels, p.a_panels, p.a_panel_bytes * threads},
                  {loop_b_panels, p.b_panels, p.b_panel_bytes * threads}};
  const double held = double(held_bytes(p));
  double more = 0;
  for (const Need& n : needs)
    if (n.wanted && !n.buffer.data()) more += double(n.bytes);
  if (more == 0) return;
  check_fits(held + more, "gemm()'s packing buffers for " + to_string(p.user_shape));
  try {
    for (Need& n : needs)
      if (n.wanted && !n.buffer.data()) n.buffer = AlignedBuffer(n.bytes);
  } catch (const std::bad_alloc&) {
    std::string message = "out of memory allocating gemm()'s packing buffers for ";
    message += to_string(p.user_shape);  // (one concatenation: GCC 12 warns falsely on the chain)
    throw Error(message);
  }
}

}  // namespace sfc
