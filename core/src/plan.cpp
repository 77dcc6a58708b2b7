// GemmPlan: planning once, then the SFC-CA loop of the paper's Listing 1.
#include <immintrin.h>  // _mm_sfence
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

#include <libxsmm_generator.h>  // libxsmm_trans_descriptor_init

#include "plan_impl.hpp"
#include "team.hpp"

namespace sfc {
namespace {

void validate(const PlanRequest& r) {
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

// Throws before allocating what the machine cannot hold: a clear message beats
// the OOM killer. `bytes` is computed in double so huge shapes cannot overflow.
void check_fits(double bytes, const std::string& what) {
  const double physical = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && bytes > physical)
    throw Error(what + " needs " + std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                " MiB, more than this machine's " +
                std::to_string(static_cast<long long>(physical / (1 << 20))) + " MiB of memory");
}

// Splits [0, n) into `parts` nearly equal ranges; returns the start of `part`.
std::int64_t split_point(std::int64_t n, std::int64_t parts, std::int64_t part) { return n * part / parts; }

// Core's own kernels (simd_kernel.hpp) for every tile of `map`: the narrow
// kernel, or the single-row one.
template <class Kernel>
bool dispatch_simd(TileKernels<Kernel>& k, const BlockSizes& b, const Addressing& at, libxsmm_blasint lda,
                   libxsmm_blasint ldb, libxsmm_blasint ldc, bool narrow) {
  return dispatch(k, b, at, [&](int m, int n, bool accumulate) {
    const decltype(Kernel::simd) s{.m = m,
                                   .n = n,
                                   .bk = b.bk,
                                   .stride_a = at.a_k_block,
                                   .stride_b = at.b_k_block,
                                   .lda = lda,
                                   .ldb = ldb,
                                   .ldc = ldc,
                                   .accumulate = accumulate};
    return Kernel{.simd = narrow ? narrow_kernel(s) : single_row_kernel(s)};
  });
}

// LIBXSMM's plain kernels, called block by block (BlockByBlock), for blocks of
// `b` addressed as `at`.
template <class Kernel, class Function, class Scalar>
bool dispatch_by_block(TileKernels<Kernel>& k,
                       Function (*make)(libxsmm_blasint, libxsmm_blasint, libxsmm_blasint,
                                        const libxsmm_blasint*, const libxsmm_blasint*,
                                        const libxsmm_blasint*, const Scalar*, const Scalar*, const int*,
                                        const int*),
                       const BlockSizes& b, const Addressing& at, libxsmm_blasint lda, libxsmm_blasint ldb,
                       libxsmm_blasint ldc) {
  const Scalar alpha = 1, beta0 = 0, beta1 = 1;
  const int flags = 0;
  return dispatch(k, b, at, [&](libxsmm_blasint m, libxsmm_blasint n, bool accumulate) {
    Kernel kernel;
    kernel.by_block = {
        .first = accumulate ? nullptr : make(m, n, b.bk, &lda, &ldb, &ldc, &alpha, &beta0, &flags, nullptr),
        .rest = make(m, n, b.bk, &lda, &ldb, &ldc, &alpha, &beta1, &flags, nullptr),
        .stride_a = at.a_k_block,
        .stride_b = at.b_k_block};
    if (!accumulate && !kernel.by_block.first) kernel.by_block.rest = nullptr;  // none: not a kernel
    return kernel;
  });
}

// Builds the kernels of `map` for the plan's dtype; false if there are none.
// A loop M of 1 (lda = bm = 1) takes the single-row kernel: LIBXSMM would run
// it on one lane; of 2 in fp32 and fp64, its two-row form, where LIBXSMM ran
// slower than on 3 rows (fp32, 2 threads, GFLOP/s, LIBXSMM -> two rows; oneDNN
// 32-35): row-major 4096x2x4096 9.1 -> 49.6 (4096x3x4096 on LIBXSMM 51-53),
// 8192x2x8192 9.3 -> 53.9, column-major 2x4096x4096 9.2 -> 48.6, blocked
// 28.6 -> 41.2; fp64 row-major 4096x2x4096 16.1 -> 21.8. `narrow`: the map
// reads a plain A in place, one column of tiles no wider than
// narrow_columns(), and takes the narrow kernel.
// `by_block`: LIBXSMM's plain kernels, one K block per call (fp32 and fp64;
// see Impl::all_in_place_map). `k_tail`:
// the map reads an operand in place along K, and K has a shorter last block
// (Impl::k_tail), whose kernels are built too.
bool dispatch_kernels(const GemmPlan::Impl& p, OperandMap& map, libxsmm_blasint lda, libxsmm_blasint ldb,
                      libxsmm_blasint ldc, bool narrow = false, bool k_tail = false, bool by_block = false) {
  // Streaming kernels only where the loop can use them: a map with a shorter
  // last K block never streams (run_sfc_ca), nor do its tail kernels.
  const auto fill = [&](auto& kernels, const BlockSizes& b, bool streaming) -> bool {
    using Kernel = std::remove_cvref_t<decltype(kernels[0][0].first)>;
    // One row, or two interleaved along K (fp32 and fp64; bf16's packed A is
    // in VNNI pairs): core's row kernels.
    const bool rows = lda == 1 || (lda == 2 && !std::is_same_v<Kernel, Bf16Kernel>);
    if (rows || narrow) return dispatch_simd(kernels, b, map.at, lda, ldb, ldc, !rows);
    if constexpr (std::is_same_v<Kernel, F32Kernel>) {
      if (by_block) return dispatch_by_block(kernels, libxsmm_smmdispatch, b, map.at, lda, ldb, ldc);
      return dispatch_libxsmm(kernels, libxsmm_smmdispatch_reducebatch_strd, b, map.at, lda, ldb, ldc,
                              input_size(p.dtype), 0, streaming);
    } else if constexpr (std::is_same_v<Kernel, F64Kernel>) {
      if (by_block) return dispatch_by_block(kernels, libxsmm_dmmdispatch, b, map.at, lda, ldb, ldc);
      return dispatch_libxsmm(kernels, libxsmm_dmmdispatch_reducebatch_strd, b, map.at, lda, ldb, ldc,
                              input_size(p.dtype), 0, streaming);
    } else {
      if (p.amx)
        return dispatch(kernels, b, map.at, [&](int m, int n, bool accumulate) {
          return Bf16Kernel{.amx = std::make_shared<const AmxBrgemm>(
                                m, n, b.bk, map.at.a_k_block, map.at.b_k_block, lda, ldb, ldc, accumulate)};
        });
      return dispatch_libxsmm(kernels, libxsmm_bsmmdispatch_reducebatch_strd, b, map.at, lda, ldb, ldc,
                              input_size(p.dtype), LIBXSMM_GEMM_FLAG_VNNI_A, streaming);
    }
  };
  const BlockSizes tail_blocks{p.blocks.bm, p.blocks.bn, p.k_tail};
  const auto both = [&](auto& kernels, auto& tails) {
    map.tail = k_tail && p.k_tail > 0;
    return fill(kernels, p.blocks, p.stream_c && !map.tail) && (!map.tail || fill(tails, tail_blocks, false));
  };
  switch (p.dtype) {
    case DType::f32: return map.ready = both(map.f32, map.f32_tail);
    case DType::f64: return map.ready = both(map.f64, map.f64_tail);
    case DType::bf16: return map.ready = both(map.bf16, map.bf16_tail);
  }
  return false;
}

// Allocates the packing buffers `copy` (in the caller's terms) needs that are
// not there yet, after checking that they fit. Not thread-safe, like the rest
// of a plan's use (one caller at a time).
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
  double held = double(p.scratch.bytes() + p.a_packed.bytes() + p.b_packed.bytes() + p.c_packed.bytes() +
                       p.a_panels.bytes() + p.b_panels.bytes());
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

GemmPlan::GemmPlan(const PlanRequest& request) : impl_(std::make_unique<Impl>()) {
  validate(request);
  Impl& p = *impl_;
  p.transposed = request.layout == Layout::row_major;
  p.user_shape = request.shape;
  p.shape = loop_shape(request.shape, request.layout);
  p.dtype = request.dtype;
  p.amx = p.dtype == DType::bf16 && amx_enabled();
  p.threads = request.threads > 0 ? request.threads : default_threads();
  const BlockSizes rule = choose_blocks(p.shape, request.dtype, p.threads, request.layout);
  BlockSizes asked = request.blocks;  // in the caller's terms: bm along M
  if (p.transposed) std::swap(asked.bm, asked.bn);
  p.blocks = {asked.bm ? asked.bm : rule.bm, asked.bn ? asked.bn : rule.bn, asked.bk ? asked.bk : rule.bk};
  if (p.dtype == DType::bf16 && p.blocks.bk % 2)
    throw Error("bf16 needs an even bk (A is stored in VNNI pairs along K), got " +
                std::to_string(p.blocks.bk));
  p.mb = (p.shape.m + p.blocks.bm - 1) / p.blocks.bm;
  p.nb = (p.shape.n + p.blocks.bn - 1) / p.blocks.bn;
  p.kb = (p.shape.k + p.blocks.bk - 1) / p.blocks.bk;
  p.k_tail = p.shape.k % p.blocks.bk == 0 ? 0 : int(p.shape.k - (p.kb - 1) * p.blocks.bk);

  // More layers than K blocks would leave layers with nothing to contract;
  // more rounds than a layer's K blocks would leave empty rounds.
  p.layers = static_cast<int>(std::min<std::int64_t>(request.k_layers, p.kb));
  p.rounds = static_cast<int>(std::min<std::int64_t>(request.k_block_factor, p.kb / p.layers));
  p.slices.resize(std::size_t(p.rounds) * p.layers);
  for (int layer = 0; layer < p.layers; ++layer) {
    const std::int64_t lo = split_point(p.kb, p.layers, layer);
    const std::int64_t n = split_point(p.kb, p.layers, layer + 1) - lo;
    for (int round = 0; round < p.rounds; ++round) {
      const std::int64_t begin = lo + split_point(n, p.rounds, round);
      const std::int64_t end = lo + split_point(n, p.rounds, round + 1);
      // Every round contracts at least one K block: the clamps above ensure it.
      assert(end > begin);
      p.slices[std::size_t(round) * p.layers + layer] = {begin, static_cast<unsigned long long>(end - begin)};
    }
  }
  assert(p.layers >= 1 && p.rounds >= 1 && std::int64_t(p.layers) * p.rounds <= p.kb);

  const double c_bytes = double(p.c_elements()) * double(output_size(p.dtype));
  p.plain = request.layout != Layout::blocked;
  const bool row_tasks =  // (see Impl::row_span)
      p.plain && !p.amx &&
      Impl::row_tasks_pay(p.nb, p.mb * p.layers, p.a_elements() * input_size(p.dtype), p.threads, p.dtype);
  p.row_span = row_tasks ? p.nb : 1;
  p.panels_a = p.plain && (p.nb == 1 || row_tasks);  // (see Impl::panels_a)
  p.panels_b = p.plain && p.mb == 1;
  unsigned long long longest = 0;
  for (const KSlice& slice : p.slices) longest = std::max(longest, slice.count);
  p.panel_blocks = longest;  // every slice in one batch
  const std::size_t a_block_bytes = std::size_t(p.blocks.bm) * std::size_t(p.blocks.bk) * input_size(p.dtype);
  const std::size_t b_block_bytes = std::size_t(p.blocks.bk) * std::size_t(p.blocks.bn) * input_size(p.dtype);
  for (auto [on, block] : {std::pair{p.panels_a, a_block_bytes}, {p.panels_b, b_block_bytes}})
    if (on) p.panel_blocks = std::clamp<unsigned long long>(Impl::kPanelBytes / block, 1, p.panel_blocks);
  // Whole cache lines, so that no two threads' panels share one.
  if (p.panels_a) p.a_panel_bytes = (p.panel_blocks * a_block_bytes + 63) / 64 * 64;
  if (p.panels_b) p.b_panel_bytes = (p.panel_blocks * b_block_bytes + 63) / 64 * 64;
  check_fits(c_bytes * (p.layers - 1), "the plan's copies of C");  // packing buffers: reserve_buffers
  const bool written_once =
      p.layers == 1 && p.rounds == 1 && p.panel_blocks >= longest && c_bytes >= double(Impl::kStreamBytes);
  p.stream_blocked_c = written_once && p.shape.k <= Impl::kStreamBlockedMaxK;
  p.stream_c = p.plain ? written_once : p.stream_blocked_c;

  // (clamped in double: a shape near 2^31 cubed has more flops than an int64 holds)
  const auto by_work = [&](double flops_per_thread) {
    return std::int64_t(std::clamp(p.shape.flops() / flops_per_thread, 1.0, double(p.threads)));
  };
  const std::int64_t tasks = p.mb * p.nb / p.row_span * p.layers;  // the loop's (run_sfc_ca)
  p.team = int(std::min<std::int64_t>(by_work(Impl::kFlopsPerThread), tasks));
  p.packing_team = int(by_work(2 * Impl::kFlopsPerThread));
  p.stretches = TaskStretches(std::max(p.team, p.packing_team), tasks);
  if (row_tasks) {  // row by row (Impl::row_span)
    p.curve.clear();
    for (std::int32_t im = 0; im < p.mb; ++im)
      for (std::int32_t in = 0; in < p.nb; ++in) p.curve.push_back({im, in});
  } else {
    p.curve = GilbertCurve(p.mb, p.nb).cells();
  }
  assert(std::int64_t(p.curve.size()) == p.mb * p.nb);  // each C tile once: the loop's tasks

  libxsmm_init();
  const std::int64_t bm = p.blocks.bm, bn = p.blocks.bn, bk = p.blocks.bk;
  const std::int64_t a_block = bm * bk, b_block = bk * bn, c_block = bm * bn;
  // (see Impl::packed_b_ld; a padded K past int, which LIBXSMM's ld is, keeps blocks)
  const bool b_in_columns = !p.panels_b && p.kb * bk <= std::numeric_limits<int>::max();
  p.packed_b_ld = b_in_columns ? p.kb * bk : bk;
  p.blocked_map.at = {.a_row_block = p.kb * a_block,
                      .a_k_block = a_block,
                      .b_col_block = p.kb * b_block,
                      .b_k_block = b_in_columns ? bk : b_block,
                      .c_row_block = c_block,
                      .c_col_block = p.mb * c_block,
                      .c_column = bm,
                      .c_copy = std::int64_t(p.c_elements()),
                      .last_rows = int(bm),
                      .last_cols = int(bn)};
  const bool ok = dispatch_kernels(p, p.blocked_map, libxsmm_blasint(bm), libxsmm_blasint(p.packed_b_ld),
                                   libxsmm_blasint(bm));
  // Plain matrices in place, in the loop's column-major terms (a row-major
  // plan's problem is the transpose): A is m x k, B k x n, C m x n. A is what
  // the kernel re-reads (once per group of C columns), so it stays packed: a
  // block's columns in a plain matrix lie a leading dimension apart, and at a
  // power of two they share a few cache sets (A in place as well lost up to
  // 0.6x on 1024/2048-wide operands). B is streamed by broadcasts, a few
  // columns at a time, and C is touched once per round, so both are fine in
  // place. Measured (row-major fp32, 2 threads, small grid, best of 3 x 10
  // runs): B and C in place ran 0.95-1.53x packing A and B (median 1.06;
  // 256x256x2048: 1.23x); C in place saved the unpacking pass (2048x2048x256:
  // 346 -> 389 GFLOP/s).
  // A ragged M or N need not copy C: the last row (column) of tiles runs
  // kernels of the rows (columns) left, on the zero-padded packed A (B). It
  // pays with one round (row-major, 2 threads, min of 10-14 alternating runs
  // against copying C: 2000x1500x300 (1,1) 0.85x the time, 1000^3 (1,1)
  // 1.00x, 777x1555x999 (2,1) 0.96x), not with several: each round reads
  // and writes the thread's C tiles again, and columns that start off a cache
  // line (a ragged M is rarely a multiple of 16) cost more to re-read than a
  // contiguous block (777x1555x999 (2,6) 1.18-1.31x, 1009x97x2003 (3,8)
  // 1.01-1.18x). One column of tiles is the exception (c_in_place_over_rounds):
  // its C, at most a block wide, is small beside the A that copying would
  // stream through memory twice more (row-major 4x6619x9439, min of 10 runs:
  // (1,2) 15.5 -> 5.2 ms, (2,4) 13.0 -> 4.4; (1,1) 5.2).
  const GemmShape& s = p.shape;
  if (p.plain && (c_in_place_over_rounds(s, p.blocks) || p.rounds == 1)) {
    Addressing c_in_place = p.blocked_map.at;
    c_in_place.c_row_block = bm;
    c_in_place.c_col_block = bn * s.m;
    c_in_place.c_column = s.m;
    c_in_place.c_copy = s.m * s.n;
    c_in_place.last_rows = int(s.m - (p.mb - 1) * bm);
    c_in_place.last_cols = int(s.n - (p.nb - 1) * bn);
    p.c_in_place_map.at = c_in_place;
    dispatch_kernels(p, p.c_in_place_map, libxsmm_blasint(bm), libxsmm_blasint(p.packed_b_ld),
                     libxsmm_blasint(s.m));
    // B in place reads whole K blocks, and a K the blocks do not divide a
    // shorter last one on kernels of its own (Impl::k_tail): not for bf16
    // with an odd one (LIBXSMM's kernels contract VNNI pairs) nor on AMX tiles.
    const bool tail_ok = p.k_tail == 0 || p.dtype != DType::bf16 || (!p.amx && p.k_tail % 2 == 0);
    if (tail_ok) {
      p.b_in_place_map.at = c_in_place;
      p.b_in_place_map.at.b_col_block = bn * s.k;
      p.b_in_place_map.at.b_k_block = bk;
      dispatch_kernels(p, p.b_in_place_map, libxsmm_blasint(bm), libxsmm_blasint(s.k), libxsmm_blasint(s.m),
                       /*narrow=*/false, /*k_tail=*/true);
      // One column of tiles: A in place too (see Impl::all_in_place_map).
      if (p.nb == 1 && one_column_reads_a_in_place(p.dtype, bn)) {
        p.all_in_place_map.at = p.b_in_place_map.at;
        p.all_in_place_map.at.a_row_block = bm;
        p.all_in_place_map.at.a_k_block = bk * s.m;
        const bool bf16 = p.dtype == DType::bf16;
        const bool by_block = !bf16 && bm >= Impl::kByBlockRows;
        dispatch_kernels(p, p.all_in_place_map, libxsmm_blasint(s.m), libxsmm_blasint(s.k),
                         libxsmm_blasint(s.m), /*narrow=*/bf16, /*k_tail=*/true, by_block);
      }
    }
  }
  if (p.plain && p.dtype != DType::bf16) {  // (see Impl::transpose_a)
    libxsmm_descriptor_blob blob;
    const auto size = unsigned(input_size(p.dtype));
    p.transpose_a = libxsmm_dispatch_trans(
        libxsmm_trans_descriptor_init(&blob, size, unsigned(bk), unsigned(bm), unsigned(bm)));
    p.transpose_b = libxsmm_dispatch_trans(
        libxsmm_trans_descriptor_init(&blob, size, unsigned(bn), unsigned(bk), unsigned(p.packed_b_ld)));
  }
  if (!ok)
    throw Error(std::string(to_string(p.dtype)) + " GEMM is not supported on this CPU: LIBXSMM " +
                LIBXSMM_VERSION + " generates no " + std::string(to_string(p.dtype)) +
                " batch-reduce kernel for ISA '" + libxsmm_get_target_arch() + "'" +
                (p.dtype == DType::bf16 ? " (bf16 needs AVX-512)" : ""));

  try {
    p.scratch = AlignedBuffer(std::size_t(c_bytes) * (p.layers - 1));
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating the plan's workspace");
  }
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
std::size_t GemmPlan::workspace_bytes() const {
  const Impl& p = *impl_;
  return p.scratch.bytes() + p.a_packed.bytes() + p.b_packed.bytes() + p.c_packed.bytes() +
         p.a_panels.bytes() + p.b_panels.bytes();
}

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
  // fork and join of its own (each costs ~3.4 us on this 2-core machine, 3.5%
  // of a 256^3 GEMM); unpacking a copied C is a second team. Packing each
  // block on first use inside the loop instead (the first thread to need a
  // block packs it, the others wait on its flag; no barrier) was no faster:
  // row-major fp32 (1,1), mean of 3 alternating processes, 256^3 level,
  // 512^3 1.67 -> 1.81 ms, 1024^3 12.1 -> 13.2, 2048x2048x256 16.3 -> 15.4.
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
