// GemmPlan: planning once, then the SFC-CA loop of the paper's Listing 1.
#include <immintrin.h>  // _mm_sfence
#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "even_split.hpp"
#include "kernel_dispatch.hpp"
#include "plan_impl.hpp"
#include "team.hpp"
#include "workspace.hpp"

namespace sfc {
namespace {

// Work the loop's thread team does first, every thread calling it (packing
// an operand: a worksharing loop that ends in the team's barrier).
using Prologue = std::function<void()>;
// Packs the loop's A (B) blocks of one task (row im / column in of tiles, K
// slice) into the calling thread's panel and returns it (see Impl::panels_a);
// empty: the loop reads the operand's blocks where they are.
using PanelPacker = std::function<const void*(std::int64_t index, const KSlice& slice)>;

// One batch-reduce over `count` K blocks into the tile at `c` (`first`:
// overwriting it). `tail` set: the last block is K's shorter last one, read
// in place, and runs on kernels of its own (OperandMap).
// `stream`: a first call stores C past the caches where its tile can (Impl::stream_c).
template <class In, class Out, class Kernel>
inline void run_batch(const KernelPair<Kernel>& kernel, const KernelPair<Kernel>* tail, bool first,
                      bool stream, const Addressing& at, const In* a, const In* b, Out* c,
                      unsigned long long count) {
  const unsigned long long full = count - (tail ? 1 : 0), one = 1;
  if (full)
    (first ? (stream && kernel.streaming ? kernel.streaming : kernel.first) : kernel.rest)(a, b, c, &full);
  if (tail)
    (first && !full ? tail->first : tail->rest)(a + std::int64_t(full) * at.a_k_block,
                                                b + std::int64_t(full) * at.b_k_block, c, &one);
}

// The SFC-CA GEMM loop (the paper's Listing 1). Tasks are (layer, curve
// index) pairs -- (layer, row of tiles) where a row shares its packed A panel
// (Impl::row_span) -- handed out in contiguous stretches: the first tasks
// form layer 0, so each "team" of threads owns one copy of C and each thread
// a contiguous stretch of the curve -- a compact patch of C tiles -- whose
// waiting tasks threads done early take, round by round (task_stretches.hpp).
// `tails` (null if none): the kernels of a shorter last K block (OperandMap).
template <class In, class Out, class Kernel>
void run_sfc_ca(GemmPlan::Impl& p, const Addressing& at, const TileKernels<Kernel>& kernels,
                const TileKernels<Kernel>* tails, const In* a, const In* b, Out* c, const Prologue& prologue,
                const PanelPacker& panel_a, const PanelPacker& panel_b, bool accumulate, bool may_stream) {
  const std::int64_t tiles = p.mb * p.nb, span = p.row_span, layer_tasks = tiles / span,
                     tasks = layer_tasks * p.layers;
  const int bm = p.blocks.bm, bn = p.blocks.bn;
  Out* const copies = p.scratch.as<Out>();  // layer l > 0 writes copies + (l-1) * at.c_copy
  // C past the caches where the caller's plan says so (`may_stream`:
  // Impl::stream_c, stream_blocked_c), on whole cache lines, and each tile is
  // one kernel call (no shorter last K block).
  const bool stream = may_stream && !tails && reinterpret_cast<std::uintptr_t>(c) % 64 == 0;

  // Threads past the loop's tasks would only wait at its barriers; they
  // join where a prologue packs whole operands up front (Impl::team).
  p.stretches.close_all();
  run_on_team(prologue ? p.packing_team : p.team, [&] {
    if (prologue) prologue();
    // Each thread its stretch of the tasks, the same every round, so that it
    // keeps its C tiles and rounds need no barrier between them; threads done
    // early take the others' last tasks of the round (task_stretches.hpp).
    const int me = omp_get_thread_num(), team = omp_get_num_threads();
    const auto [begin, end] = TaskStretches::stretch(tasks, me, team);
    for (int round = 0; round < p.rounds; ++round) {
      p.stretches.open(me, round, begin, end);
      for (std::int64_t t = 0; p.stretches.next(me, team, round, t); p.stretches.done(t, round)) {
        const std::int64_t layer = t / layer_tasks, first = t % layer_tasks * span;  // curve index
        const KSlice& ks = p.slice(round, layer);
        Out* c_layer = layer == 0 ? c : copies + (layer - 1) * at.c_copy;
        // Round 0 overwrites its copy of C, unless layer 0 adds to a C the
        // prologue scaled by beta (C = A B + beta C, in place).
        const bool overwrite = round == 0 && !(accumulate && layer == 0);
        // The slice's K blocks in one batch, or a panel's worth at a time
        // when an operand is packed just before use (Impl::panels_a), each
        // panel of A into the task's `span` tiles (one, or a row: Impl::row_span).
        for (unsigned long long done = 0; done < ks.count; done += p.panel_blocks) {
          const KSlice part{ks.begin + std::int64_t(done), std::min(p.panel_blocks, ks.count - done)};
          const In* a_panel = panel_a ? static_cast<const In*>(panel_a(p.curve[first].x, part)) : nullptr;
          for (std::int64_t i = first; i < first + span; ++i) {
            const GridCell tile = p.curve[i];  // (im, in)
            const bool last_row = tile.x == p.mb - 1, last_col = tile.y == p.nb - 1;
            const In* a_blocks = a_panel ? a_panel : a + tile.x * at.a_row_block + part.begin * at.a_k_block;
            const In* b_blocks = panel_b ? static_cast<const In*>(panel_b(tile.y, part))
                                         : b + tile.y * at.b_col_block + part.begin * at.b_k_block;
            const bool ends_k = tails && part.begin + std::int64_t(part.count) == p.kb;
            run_batch(kernels[last_row][last_col], ends_k ? &(*tails)[last_row][last_col] : nullptr,
                      overwrite && done == 0, stream, at, a_blocks, b_blocks,
                      c_layer + tile.x * at.c_row_block + tile.y * at.c_col_block, part.count);
          }
        }
      }
    }
    if (stream) _mm_sfence();  // non-temporal stores are seen by the other threads and the caller after it
    if (p.layers > 1) {        // add the copies into C, tile by tile in curve order
#pragma omp barrier
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < tiles; ++i) {
        const GridCell tile = p.curve[i];
        const std::int64_t offset = tile.x * at.c_row_block + tile.y * at.c_col_block;
        const int rows = tile.x == p.mb - 1 ? at.last_rows : bm,
                  cols = tile.y == p.nb - 1 ? at.last_cols : bn;
        for (int layer = 1; layer < p.layers; ++layer)
          for (int j = 0; j < cols; ++j) {
            Out* __restrict dst = c + offset + j * at.c_column;
            const Out* __restrict src = copies + (layer - 1) * at.c_copy + offset + j * at.c_column;
#pragma omp simd
            for (int r = 0; r < rows; ++r) dst[r] += src[r];
          }
      }
    }
  });
}

}  // namespace

namespace {

// The loop's fields of `p` from its decision.
void adopt(GemmPlan::Impl& p) {
  const PlanDecision& d = p.decision;
  p.transposed = d.transposed;
  p.user_shape = d.shape;
  p.shape = d.loop_shape;
  p.dtype = d.dtype;
  p.threads = d.threads;
  p.team = d.team;
  p.packing_team = d.packing_team;
  p.amx = d.amx;
  p.layers = d.k_layers;
  p.rounds = d.k_block_factor;
  p.blocks = d.blocks();
  p.mb = d.mb;
  p.nb = d.nb;
  p.kb = d.kb;
  p.k_tail = d.k_tail;
  p.plain = d.plain;
  p.panels_a = d.panels_a;
  p.panels_b = d.panels_b;
  p.packed_b_ld = d.packed_b_ld;
  p.row_span = d.row_span;
  p.panel_blocks = d.panel_blocks;
  p.stream_c = d.stream_c;
  p.stream_blocked_c = d.stream_blocked_c;
  p.a_panel_bytes = d.a_panel_bytes;
  p.b_panel_bytes = d.b_panel_bytes;
}

// The K blocks of every (round, layer) pair: each layer an equal share of
// K, each round an equal share of its layer's.
void split_k(GemmPlan::Impl& p) {
  p.slices.resize(std::size_t(p.rounds) * p.layers);
  for (int layer = 0; layer < p.layers; ++layer) {
    const std::int64_t lo = split_point(p.kb, p.layers, layer);
    const std::int64_t n = split_point(p.kb, p.layers, layer + 1) - lo;
    for (int round = 0; round < p.rounds; ++round) {
      const std::int64_t begin = lo + split_point(n, p.rounds, round);
      const std::int64_t end = lo + split_point(n, p.rounds, round + 1);
      // Every round contracts at least one K block: decide()'s clamps ensure it.
      assert(end > begin);
      p.slices[std::size_t(round) * p.layers + layer] = {begin, static_cast<unsigned long long>(end - begin)};
    }
  }
  assert(p.layers >= 1 && p.rounds >= 1 && std::int64_t(p.layers) * p.rounds <= p.kb);
}

// The curve map (curve index -> tile) and the loop's share-out of tasks.
void map_tiles(GemmPlan::Impl& p) {
  p.stretches = TaskStretches(std::max(p.team, p.packing_team), p.decision.tasks);
  if (p.decision.curve == CurveOrder::row_by_row) {  // (Impl::row_span)
    p.curve.clear();
    for (std::int32_t im = 0; im < p.mb; ++im)
      for (std::int32_t in = 0; in < p.nb; ++in) p.curve.push_back({im, in});
  } else {
    p.curve = GilbertCurve(p.mb, p.nb).cells();
  }
  assert(std::int64_t(p.curve.size()) == p.mb * p.nb);  // each C tile once: the loop's tasks
}

}  // namespace

GemmPlan::GemmPlan(const PlanRequest& request) : impl_(std::make_unique<Impl>()) {
  check_request(request);
  Impl& p = *impl_;
  p.decision = decide(request, ArchContext::detect(/*ask_for_tiles=*/request.dtype == DType::bf16));
  adopt(p);
  split_k(p);
  check_scratch_fits(p);  // before generating anything
  map_tiles(p);
  build_kernels(p);
  reserve_scratch(p);
  if (p.plain) {  // what gemm() on tight matrices of the plan's own layout copies
    const GemmShape& u = p.user_shape;
    const bool row = request.layout == Layout::row_major;
    reserve_buffers(p, copies(request.layout, row ? u.k : u.m, row ? u.n : u.k, row ? u.n : u.m));
  }
}

GemmPlan::~GemmPlan() = default;
GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;

const GemmShape& GemmPlan::shape() const { return impl_->user_shape; }
DType GemmPlan::dtype() const { return impl_->dtype; }
int GemmPlan::threads() const { return impl_->threads; }
int GemmPlan::k_layers() const { return impl_->layers; }
int GemmPlan::k_block_factor() const { return impl_->rounds; }
std::string_view GemmPlan::kernel() const { return impl_->amx ? "amx" : "libxsmm"; }
bool GemmPlan::streams_c() const { return impl_->stream_c; }
BlockSizes GemmPlan::blocks() const {
  const BlockSizes& b = impl_->blocks;
  return impl_->transposed ? BlockSizes{b.bn, b.bm, b.bk} : b;
}
std::int64_t GemmPlan::mb() const { return impl_->transposed ? impl_->nb : impl_->mb; }
std::int64_t GemmPlan::nb() const { return impl_->transposed ? impl_->mb : impl_->nb; }
std::int64_t GemmPlan::kb() const { return impl_->kb; }
std::size_t GemmPlan::a_elements() const {
  return impl_->transposed ? impl_->b_elements() : impl_->a_elements();
}
std::size_t GemmPlan::b_elements() const {
  return impl_->transposed ? impl_->a_elements() : impl_->b_elements();
}
std::size_t GemmPlan::c_elements() const { return impl_->c_elements(); }
std::size_t GemmPlan::workspace_bytes() const { return held_bytes(*impl_); }
const PlanDecision& GemmPlan::decision() const { return impl_->decision; }

namespace {

// The loop on the caller's operands (swapped for a transposed plan) through
// `map`, after the team has run `prologue` (if any); `panel_a` (`panel_b`)
// packs the caller's A (B) panel by panel, if set. `may_stream`: C may be
// stored past the caches (the plan's flag for this C; false for a copy gemm()
// unpacks).
void run(GemmPlan::Impl& p, const OperandMap& map, const void* a, const void* b, void* c, bool may_stream,
         const Prologue& prologue = {}, const PanelPacker& panel_a = {}, const PanelPacker& panel_b = {},
         bool accumulate = false) {
  if (p.transposed) std::swap(a, b);  // C^T = B^T A^T
  const PanelPacker& loop_a = p.transposed ? panel_b : panel_a;
  const PanelPacker& loop_b = p.transposed ? panel_a : panel_b;
  switch (p.dtype) {
    case DType::f32:
      run_sfc_ca(p, map.at, map.f32, map.tail ? &map.f32_tail : nullptr, static_cast<const float*>(a),
                 static_cast<const float*>(b), static_cast<float*>(c), prologue, loop_a, loop_b, accumulate,
                 may_stream);
      break;
    case DType::f64:
      run_sfc_ca(p, map.at, map.f64, map.tail ? &map.f64_tail : nullptr, static_cast<const double*>(a),
                 static_cast<const double*>(b), static_cast<double*>(c), prologue, loop_a, loop_b, accumulate,
                 may_stream);
      break;
    case DType::bf16:
      run_sfc_ca(p, map.at, map.bf16, map.tail ? &map.bf16_tail : nullptr,
                 static_cast<const libxsmm_bfloat16*>(a), static_cast<const libxsmm_bfloat16*>(b),
                 static_cast<float*>(c), prologue, loop_a, loop_b, accumulate, may_stream);
      break;
  }
}

}  // namespace

void GemmPlan::execute(const void* a, const void* b, void* c) {
  const OneCaller guard(*impl_);
  run(*impl_, impl_->blocked_map, a, b, c, impl_->stream_blocked_c);
}

namespace {

// How gemm() runs a call: what it copies and, when C is written in place,
// through which map (null: C is copied out of the blocked result).
struct CallRoute {
  GemmCopies copy;
  const OperandMap* map = nullptr;
};

// The in-place kernels were built for the plan's own layout and tight leading
// dimensions. In the loop's terms B and C go in place; a row-major plan's loop
// B is the caller's A, and its loop A the caller's B. The loop's A is always
// packed there, so alpha rides on its packing (not for bf16: alpha*A would
// round to bf16; C is then copied and alpha applied to the fp32 result).
CallRoute route(const GemmPlan::Impl& p, Layout layout, Transpose trans_a, Transpose trans_b,
                std::int64_t lda, std::int64_t ldb, std::int64_t ldc, double alpha) {
  if (layout == Layout::blocked) return {{false, false, false}};  // execute() on the caller's blocks
  const GemmShape& u = p.user_shape;
  const bool row = layout == Layout::row_major;
  const bool own = row == p.transposed;
  const bool alpha_folds = alpha == 1 || p.dtype != DType::bf16;
  if (!own || ldc != (row ? u.n : u.m) || !alpha_folds) return {};
  // The loop's B in place: stored untransposed and tight.
  const bool loop_b_as_is =
      row ? trans_a == Transpose::none && lda == u.k : trans_b == Transpose::none && ldb == u.k;
  // The loop's A in place as well (one column of tiles): alpha has no packing to ride on.
  const bool loop_a_as_is =
      row ? trans_b == Transpose::none && ldb == u.n : trans_a == Transpose::none && lda == u.m;
  if (loop_a_as_is && loop_b_as_is && alpha == 1 && p.all_in_place_map.ready)
    return {{false, false, false}, &p.all_in_place_map};
  if (loop_b_as_is && p.b_in_place_map.ready)
    return {row ? GemmCopies{false, true, false} : GemmCopies{true, false, false}, &p.b_in_place_map};
  if (p.c_in_place_map.ready) return {{true, true, false}, &p.c_in_place_map};
  return {};
}

}  // namespace

GemmCopies GemmPlan::copies(Layout layout, Transpose trans_a, Transpose trans_b, std::int64_t lda,
                            std::int64_t ldb, std::int64_t ldc, double alpha) const {
  return route(*impl_, layout, trans_a, trans_b, lda, ldb, ldc, alpha).copy;
}

GemmCopies GemmPlan::copies(Layout layout, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) const {
  return copies(layout, Transpose::none, Transpose::none, lda, ldb, ldc);
}

void GemmPlan::gemm(Layout layout, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, void* c,
                    std::int64_t ldc) {
  gemm(layout, Transpose::none, Transpose::none, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

void GemmPlan::gemm(Layout layout, Transpose trans_a, Transpose trans_b, double alpha, const void* a,
                    std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c,
                    std::int64_t ldc) {
  if (layout == Layout::blocked) {
    if (trans_a != Transpose::none || trans_b != Transpose::none || alpha != 1 || beta != 0)
      throw Error("transposes, alpha and beta need plain matrices (row or col layout), not the blocked one");
    return execute(a, b, c);
  }
  Impl& p = *impl_;
  const OneCaller guard(p);
  if (!p.plain)
    throw Error(
        "this plan was built for the blocked layout: set PlanRequest::layout to use gemm() "
        "on plain matrices");
  // A transposed operand of a row-major call is a column-major matrix of the
  // same memory (and the other way round): packing reads it that way.
  const Layout other = layout == Layout::row_major ? Layout::col_major : Layout::row_major;
  const Layout layout_a = trans_a == Transpose::none ? layout : other;
  const Layout layout_b = trans_b == Transpose::none ? layout : other;
  check_operand_ld(p, Operand::a, layout_a, lda);
  check_operand_ld(p, Operand::b, layout_b, ldb);
  check_result_ld(p, layout, ldc);
  if (alpha == 0) return scale_result(p, layout, c, ldc, beta);  // A and B are not read

  const CallRoute way = route(p, layout, trans_a, trans_b, lda, ldb, ldc, alpha);
  const GemmCopies& copy = way.copy;
  reserve_buffers(p, copy);
  const void* a_used = copy.a ? p.a_packed.data() : a;
  const void* b_used = copy.b ? p.b_packed.data() : b;
  // C in place: alpha scales the packed loop A (the caller's A, or B in a
  // row-major plan), the prologue scales C by beta (1: nothing) and layer 0's
  // first round adds to it (beta = 0: overwrites it, C never read). C copied:
  // the blocked result is written into C with alpha and beta applied.
  const bool in_place = way.map != nullptr;
  const bool accumulate = in_place && beta != 0;
  const double alpha_a = in_place && !p.transposed ? alpha : 1,
               alpha_b = in_place && p.transposed ? alpha : 1;
  // Packing runs in the loop's own thread team, so packing A and B costs no
  // fork and join of its own; unpacking a copied C is a second team. Packing
  // each block on first use inside the loop instead (the first thread to need
  // a block packs it, the others wait on its flag; no barrier) was no faster
  // (docs/experiments/2026-12-07-figures-from-code-comments.md#packing-in-the-loops-team).
  // An operand the plan packs panel by panel inside the loop (Impl::panels_a:
  // the loop's A is the caller's A, or B in a transposed plan) is not packed
  // up front.
  const bool a_in_panels = copy.a && packs_in_panels(p, Operand::a);
  const bool b_in_panels = copy.b && packs_in_panels(p, Operand::b);
  const bool packs_a = copy.a && !a_in_panels, packs_b = copy.b && !b_in_panels;
  const bool scale_c = accumulate && beta != 1;
  Prologue pack;  // empty where nothing is done up front: the loop's team can then be smaller (Impl::team)
  if (packs_a || packs_b || scale_c)
    pack = [&] {
      if (packs_a) pack_operand(p, Operand::a, layout_a, a, lda, p.a_packed.data(), alpha_a);
      if (packs_b) pack_operand(p, Operand::b, layout_b, b, ldb, p.b_packed.data(), alpha_b);
      if (scale_c) scale_result_lines(p, layout, c, ldc, beta);
    };
  const auto packer = [&](Operand operand) -> PanelPacker {
    const bool is_a = operand == Operand::a;
    const bool loop_a = is_loop_a(p, operand);
    AlignedBuffer& panels = loop_a ? p.a_panels : p.b_panels;
    const std::size_t bytes = loop_a ? p.a_panel_bytes : p.b_panel_bytes;
    const void* src = is_a ? a : b;
    const Layout src_layout = is_a ? layout_a : layout_b;
    const std::int64_t ld = is_a ? lda : ldb;
    const double scale = is_a ? alpha_a : alpha_b;
    return [&p, &panels, bytes, operand, src, src_layout, ld, scale](std::int64_t index,
                                                                     const KSlice& slice) -> const void* {
      void* dst = panels.as<char>() + std::size_t(omp_get_thread_num()) * bytes;
      pack_panel(p, operand, src_layout, src, ld, index, slice, dst, scale);
      return dst;
    };
  };
  const PanelPacker panel_a = a_in_panels ? packer(Operand::a) : PanelPacker{};
  const PanelPacker panel_b = b_in_panels ? packer(Operand::b) : PanelPacker{};
  if (in_place) return run(p, *way.map, a_used, b_used, c, p.stream_c, pack, panel_a, panel_b, accumulate);
  run(p, p.blocked_map, a_used, b_used, p.c_packed.data(), /*may_stream=*/false, pack, panel_a, panel_b);
  unpack_result(p, p.c_packed.data(), layout, c, ldc, alpha, beta);
}

}  // namespace sfc
