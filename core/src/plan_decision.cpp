// decide(): every choice of a GemmPlan as plain data (sfc/plan_decision.hpp).
// Reads nothing but its arguments; plan.cpp builds a plan from its answer.
#include "sfc/plan_decision.hpp"

#include <libxsmm.h>

#include <algorithm>
#include <limits>
#include <ostream>
#include <string>
#include <utility>

#include "amx_brgemm.hpp"
#include "even_split.hpp"
#include "row_tasks.hpp"
#include "sfc/knobs.hpp"
#include "simd_kernel.hpp"

namespace sfc {
namespace {

// A call opens a team of one thread per this many flops of work, and one
// per twice that where its team packs operands first
// (docs/experiments/2026-12-04-thread-team-zen5.md).
constexpr double kFlopsPerThread = 5e5;
// An operand packed inside the loop is packed this many bytes of K blocks at
// a time, so that the panel stays in L2 between its packing and the kernel
// (docs/experiments/2026-12-07-figures-from-code-comments.md#a-panels-packed-in-the-loop).
constexpr std::size_t kPanelBytes = std::size_t(256) << 10;
// C streams past the caches only from this size: a judgement (past the L2 of
// most cores), not a measurement.
constexpr std::size_t kStreamBytes = std::size_t(4) << 20;
// A blocked C streams only up to this K: beyond it the prefetchers' reads
// for ownership cost less than non-temporal stores
// (docs/experiments/2026-12-06-blocked-c-streaming-zen5.md).
constexpr std::int64_t kStreamBlockedMaxK = 64;
// fp32 and fp64 tiles of this many rows or more read in place along one
// column of tiles run LIBXSMM's plain kernels block by block
// (docs/experiments/2026-12-02-stall-by-block-zen5.md).
constexpr int kByBlockRows = 512;

// The kernel family dispatch_kernels() (kernel_dispatch.cpp) builds for a map
// whose A has leading dimension `lda`.
KernelFamily family(const PlanDecision& d, std::int64_t lda, bool narrow, bool by_block) {
  const bool bf16 = d.dtype == DType::bf16;
  if (lda == 1 || (lda == 2 && !bf16)) return KernelFamily::simd_row;
  if (narrow) return KernelFamily::narrow;
  if (!bf16) return by_block ? KernelFamily::by_block : KernelFamily::libxsmm;
  return d.amx ? KernelFamily::amx : KernelFamily::libxsmm;
}

// The K blocks in the longest (round, layer) slice of the plan's K split.
unsigned long long longest_slice(std::int64_t kb, int layers, int rounds) {
  std::int64_t longest = 0;
  for (int layer = 0; layer < layers; ++layer) {
    const std::int64_t n = split_point(kb, layers, layer + 1) - split_point(kb, layers, layer);
    for (int round = 0; round < rounds; ++round)
      longest = std::max(longest, split_point(n, rounds, round + 1) - split_point(n, rounds, round));
  }
  return static_cast<unsigned long long>(longest);
}

// What gemm() on tight matrices of the plan's own layout copies, and the
// bytes of the buffers that takes (as reserve_buffers allocates them).
void plan_workspace(PlanDecision& d) {
  if (d.all_in_place_kernels != KernelFamily::none)
    d.tight_copies = {false, false, false};
  else if (d.b_in_place_kernels != KernelFamily::none)
    d.tight_copies = d.transposed ? GemmCopies{false, true, false} : GemmCopies{true, false, false};
  else if (d.c_in_place_kernels != KernelFamily::none)
    d.tight_copies = {true, true, false};
  else
    d.tight_copies = {true, true, true};
  d.workspace_bytes = d.scratch_bytes;
  if (!d.plain) {
    d.tight_copies = {false, false, false};
    return;
  }
  const std::size_t in = input_size(d.dtype);
  const GemmCopies& copy = d.tight_copies;
  // The caller's A is the loop's B in a transposed plan, and B the loop's A.
  const bool a_panels = d.transposed ? d.panels_b : d.panels_a;
  const bool b_panels = d.transposed ? d.panels_a : d.panels_b;
  const bool a_in_panels = copy.a && a_panels, b_in_panels = copy.b && b_panels;
  const bool loop_a_panels = d.transposed ? b_in_panels : a_in_panels;
  const bool loop_b_panels = d.transposed ? a_in_panels : b_in_panels;
  if (copy.a && !a_in_panels) d.workspace_bytes += (d.transposed ? d.b_elements() : d.a_elements()) * in;
  if (copy.b && !b_in_panels) d.workspace_bytes += (d.transposed ? d.a_elements() : d.b_elements()) * in;
  if (copy.c) d.workspace_bytes += d.c_elements() * output_size(d.dtype);
  if (loop_a_panels) d.workspace_bytes += d.a_panel_bytes * std::size_t(d.threads);
  if (loop_b_panels) d.workspace_bytes += d.b_panel_bytes * std::size_t(d.threads);
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

}  // namespace

ArchContext ArchContext::detect(bool ask_for_tiles) {
  ArchContext arch;
  arch.amx_tiles = amx_available();
  arch.amx_kernels = ask_for_tiles && amx_enabled();
  arch.narrow_bf16_columns = narrow_columns<libxsmm_bfloat16>();
  arch.default_threads = sfc::default_threads();
  arch.one_thread = in_forked_child();
  return arch;
}

std::string_view to_string(KernelFamily family) {
  switch (family) {
    case KernelFamily::none: return "none";
    case KernelFamily::libxsmm: return "libxsmm";
    case KernelFamily::simd_row: return "simd-row";
    case KernelFamily::narrow: return "narrow";
    case KernelFamily::by_block: return "by-block";
    case KernelFamily::amx: return "amx";
  }
  return "?";
}

void check_request(const PlanRequest& r) {
  const auto& s = r.shape;
  if (s.m < 1 || s.n < 1 || s.k < 1)
    throw Error("GEMM sizes must be positive, got M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                " K=" + std::to_string(s.k));
  if (s.m > kMaxGemmSize || s.n > kMaxGemmSize || s.k > kMaxGemmSize)
    throw Error("GEMM sizes must be below 2^31, got M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                " K=" + std::to_string(s.k));
  Knobs{r.k_layers, r.k_block_factor}.check();
  if (r.threads < 0) throw Error("threads must be >= 1, got " + std::to_string(r.threads));
  const auto& b = r.blocks;
  if (b.bm < 0 || b.bn < 0 || b.bk < 0) throw Error("block sizes must be positive");
}

BlockSizes PlanDecision::caller_blocks() const {
  const BlockSizes& b = blocks();
  return transposed ? BlockSizes{b.bn, b.bm, b.bk} : b;
}
std::size_t PlanDecision::a_elements() const { return std::size_t(mb * kb) * blocks().bm * blocks().bk; }
std::size_t PlanDecision::b_elements() const { return std::size_t(nb * kb) * blocks().bk * blocks().bn; }
std::size_t PlanDecision::c_elements() const { return std::size_t(mb * nb) * blocks().bm * blocks().bn; }

PlanDecision decide(const PlanRequest& request, const ArchContext& arch) {
  check_request(request);
  PlanDecision d;
  d.shape = request.shape;
  d.dtype = request.dtype;
  d.layout = request.layout;
  d.transposed = request.layout == Layout::row_major;
  d.loop_shape = loop_shape(request.shape, request.layout);
  d.plain = request.layout != Layout::blocked;
  d.amx = d.dtype == DType::bf16 && arch.amx_kernels;
  d.threads = request.threads > 0 ? arch.usable_threads(request.threads) : arch.default_threads;

  // Blocks: the rule's, or those the request names (in the caller's terms).
  d.block_choice = choose_block_strategy(d.loop_shape, d.dtype, d.threads, d.layout, arch);
  BlockSizes asked = request.blocks;
  if (d.transposed) std::swap(asked.bm, asked.bn);
  if (asked.bm || asked.bn || asked.bk) {
    BlockChoice& c = d.block_choice;
    c.blocks = {asked.bm ? asked.bm : c.blocks.bm, asked.bn ? asked.bn : c.blocks.bn,
                asked.bk ? asked.bk : c.blocks.bk};
    c.strategy = BlockStrategy::requested;
    if (asked.bm && asked.bn && asked.bk) c.regimes = 0;
    c.regimes |= 1u << unsigned(BlockStrategy::requested);
  }
  const BlockSizes& b = d.blocks();
  if (d.dtype == DType::bf16 && b.bk % 2)
    throw Error("bf16 needs an even bk (A is stored in VNNI pairs along K), got " + std::to_string(b.bk));
  const GemmShape& s = d.loop_shape;
  d.mb = (s.m + b.bm - 1) / b.bm;
  d.nb = (s.n + b.bn - 1) / b.bn;
  d.kb = (s.k + b.bk - 1) / b.bk;
  d.k_tail = s.k % b.bk == 0 ? 0 : int(s.k - (d.kb - 1) * b.bk);

  // More layers than K blocks would leave layers with nothing to contract;
  // more rounds than a layer's K blocks would leave empty rounds.
  d.k_layers = static_cast<int>(std::min<std::int64_t>(request.k_layers, d.kb));
  d.k_block_factor = static_cast<int>(std::min<std::int64_t>(request.k_block_factor, d.kb / d.k_layers));
  d.longest_slice = longest_slice(d.kb, d.k_layers, d.k_block_factor);

  // Row tasks and operands packed panel by panel (GemmPlan::Impl::panels_a).
  const std::size_t in = input_size(d.dtype);
  d.row_tasks =
      d.plain && !d.amx && row_tasks_pay(d.nb, d.mb * d.k_layers, d.a_elements() * in, d.threads, d.dtype);
  d.row_span = d.row_tasks ? d.nb : 1;
  d.curve = d.row_tasks ? CurveOrder::row_by_row : CurveOrder::gilbert;
  d.panels_a = d.plain && (d.nb == 1 || d.row_tasks);
  d.panels_b = d.plain && d.mb == 1;
  d.panel_blocks = d.longest_slice;  // every slice in one batch
  const std::size_t a_block_bytes = std::size_t(b.bm) * std::size_t(b.bk) * in;
  const std::size_t b_block_bytes = std::size_t(b.bk) * std::size_t(b.bn) * in;
  for (auto [on, block] : {std::pair{d.panels_a, a_block_bytes}, {d.panels_b, b_block_bytes}})
    if (on) d.panel_blocks = std::clamp<unsigned long long>(kPanelBytes / block, 1, d.panel_blocks);
  // Whole cache lines, so that no two threads' panels share one.
  if (d.panels_a) d.a_panel_bytes = (d.panel_blocks * a_block_bytes + 63) / 64 * 64;
  if (d.panels_b) d.b_panel_bytes = (d.panel_blocks * b_block_bytes + 63) / 64 * 64;
  // (a padded K past int, which LIBXSMM's ld is, keeps blocks)
  d.b_in_columns = !d.panels_b && d.kb * b.bk <= std::numeric_limits<int>::max();
  d.packed_b_ld = d.b_in_columns ? d.kb * b.bk : b.bk;

  // C past the caches where each tile is written once, by one kernel call.
  const double c_bytes = double(d.c_elements()) * double(output_size(d.dtype));
  const bool written_once = d.k_layers == 1 && d.k_block_factor == 1 && d.panel_blocks >= d.longest_slice &&
                            c_bytes >= double(kStreamBytes);
  d.stream_blocked_c = written_once && s.k <= kStreamBlockedMaxK;
  d.stream_c = d.plain ? written_once : d.stream_blocked_c;

  // The team: a thread per kFlopsPerThread, no more than the loop's tasks
  // (clamped in double: a shape near 2^31 cubed has more flops than an int64 holds).
  const auto by_work = [&](double flops_per_thread) {
    return std::int64_t(std::clamp(s.flops() / flops_per_thread, 1.0, double(d.threads)));
  };
  d.tasks = d.mb * d.nb / d.row_span * d.k_layers;
  d.team = int(std::min<std::int64_t>(by_work(kFlopsPerThread), d.tasks));
  d.packing_team = int(by_work(2 * kFlopsPerThread));

  // The operand maps (kernel_dispatch.cpp): the blocked layout always; on
  // plain operands C in place where the blocks divide M and N or the plan has
  // one round, B in place too where K's last block can run (not a bf16 odd
  // one, nor on AMX tiles), and A as well with one column of tiles.
  d.blocked_kernels = family(d, b.bm, false, false);
  if (d.plain && (c_in_place_over_rounds(s, b) || d.k_block_factor == 1)) {
    d.c_in_place_kernels = d.blocked_kernels;
    const bool tail_ok = d.k_tail == 0 || d.dtype != DType::bf16 || (!d.amx && d.k_tail % 2 == 0);
    if (tail_ok) {
      d.b_in_place_kernels = d.blocked_kernels;
      const bool bf16 = d.dtype == DType::bf16;
      if (d.nb == 1 && (!bf16 || b.bn <= arch.narrow_bf16_columns))  // (one_column_reads_a_in_place)
        d.all_in_place_kernels = family(d, s.m, bf16, !bf16 && b.bm >= kByBlockRows);
    }
  }
  d.transpose_kernels = d.plain && d.dtype != DType::bf16;

  d.scratch_bytes = std::size_t(c_bytes) * std::size_t(d.k_layers - 1);
  plan_workspace(d);
  return d;
}

std::vector<std::string> PlanDecision::describe() const {
  const BlockSizes cb = caller_blocks();
  const BlockStrategyInfo& why = block_strategy_info(block_choice.strategy);
  std::string regimes;
  for (unsigned i = 0; i < kBlockStrategyCount; ++i)
    if (block_choice.applied(BlockStrategy(i)))
      regimes += std::string(regimes.empty() ? "" : ", ") + std::string(to_string(BlockStrategy(i)));
  const auto copies = [](const GemmCopies& c) {
    std::string text;
    for (auto [on, name] : {std::pair{c.a, "A"}, {c.b, "B"}, {c.c, "C"}})
      if (on) text += std::string(text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("nothing") : text;
  };
  std::vector<std::string> lines = {
      "shape: " + to_string(shape) + " " + std::string(to_string(dtype)) + " " +
          std::string(to_string(layout)),
      "loop: " + to_string(loop_shape) + (transposed ? " (C^T = B^T A^T)" : ""),
      "threads: " + std::to_string(threads) + " (team " + std::to_string(team) + ", packing team " +
          std::to_string(packing_team) + ")",
      "blocks: " + std::to_string(cb.bm) + "x" + std::to_string(cb.bn) + "x" + std::to_string(cb.bk) +
          " (grid " + std::to_string(caller_mb()) + "x" + std::to_string(caller_nb()) + "x" +
          std::to_string(kb) + ")",
      "block strategy: " + std::string(why.name) + ": " + std::string(why.reason) +
          (why.record.empty() ? "" : " (" + std::string(why.record) + ")"),
      "block regimes: " + regimes,
      "k_layers: " + std::to_string(k_layers) + ", k_block_factor: " + std::to_string(k_block_factor) +
          ", longest slice: " + std::to_string(longest_slice) + " K blocks" +
          (k_tail ? ", last K block " + std::to_string(k_tail) : ""),
      "tasks: " + std::to_string(tasks) +
          (row_tasks ? " row tasks of " + std::to_string(row_span) + " tiles" : "") +
          ", curve: " + (curve == CurveOrder::gilbert ? "gilbert" : "row by row"),
      "panels: loop A " + yes_no(panels_a) + ", loop B " + yes_no(panels_b) + ", " +
          std::to_string(panel_blocks) + " K blocks a batch",
      "streams C: " + yes_no(stream_c) + " (blocked C: " + yes_no(stream_blocked_c) + ")",
      "kernels: " + std::string(kernel()) + "; blocked " + std::string(to_string(blocked_kernels)) +
          ", C in place " + std::string(to_string(c_in_place_kernels)) + ", B in place " +
          std::string(to_string(b_in_place_kernels)) + ", all in place " +
          std::string(to_string(all_in_place_kernels)),
      "tight call copies: " + copies(tight_copies),
      "workspace: " + std::to_string(workspace_bytes) + " bytes (copies of C " +
          std::to_string(scratch_bytes) + ")",
  };
  return lines;
}

std::ostream& operator<<(std::ostream& out, const PlanDecision& decision) {
  for (const std::string& line : decision.describe()) out << line << '\n';
  return out;
}

}  // namespace sfc
