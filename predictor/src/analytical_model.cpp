// The roofline behind AnalyticalModel (see the header). Everything is in
// elements of the padded, blocked problem the engine actually runs: M, N and K
// rounded up to whole bm, bn and bk blocks.
#include "sfc/analytical_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sfc/error.hpp"

namespace sfc {
namespace {

struct Grid {
  BlockSizes blocks;
  std::int64_t mb, nb, kb;  // blocks along M, N, K
};

Grid grid_of(const GemmShape& shape, const BlockSizes& b) {
  return {b, (shape.m + b.bm - 1) / b.bm, (shape.n + b.bn - 1) / b.bn, (shape.k + b.bk - 1) / b.bk};
}

Grid grid_of(const GemmShape& shape, DType dtype, int threads) {
  return grid_of(shape, choose_blocks(shape, dtype, threads));
}

// Whether `shape` is thin enough to take one round (see kOneRoundBelow).
bool thin_for_rounds(const GemmShape& shape) { return std::min(shape.m, shape.n) < kOneRoundBelow; }

// The grid predict() prices. A thin shape through a plain layout runs on a
// grid of another kind than the blocked one of its own shape: the loop of a
// row-major call is the transpose, and plain operands take tall tiles or thin
// columns (core/src/blocking.cpp), so that 2491x7x4183 row-major runs one row
// of 312 tiles 7 x 8, not one column of 39 tiles 64 x 7. Priced on the grid
// that runs, the model chose better where a single layer wins (a small N),
// worse where layers win over a long K (a small M) for a reason the roofline
// does not price; elsewhere the blocked grid of the shape measured better
// (docs/experiments/2026-12-04-model-rounds-and-thin-shapes.md#thin-shapes-the-grid-that-runs-measured-2026-12-04-the-shipped-tables).
Grid priced_grid(const GemmShape& shape, DType dtype, int threads, Layout layout) {
  if (!thin_for_rounds(shape)) return grid_of(shape, dtype, threads);
  const GemmShape loop = loop_shape(shape, layout);
  return grid_of(loop, choose_blocks(loop, dtype, threads, layout));
}

// Whether the kernels read the big operand from the caller's memory, cold,
// rather than from a copy a prefetched sweep made (see kMemoryStall): the
// blocked entry always; a plain entry where the grid that runs has a single
// column or row of tiles (a thin shape), whose big operand no tile shares, so
// that gemm() reads it in place or packs it panel by panel just before the
// kernel. Most thin shapes are memory bound, where the stall does not show;
// the fits chose better with it
// (docs/experiments/2026-12-04-model-rounds-and-thin-shapes.md#thin-shapes-read-in-place-measured-2026-12-04-the-shipped-tables).
bool reads_in_place(const GemmShape& shape, const Grid& g, Layout layout) {
  return layout == Layout::blocked || (thin_for_rounds(shape) && (g.mb == 1 || g.nb == 1));
}

// Sides (in tiles) of `tiles` consecutive tiles of the Gilbert curve over an
// mb x nb grid. The curve's recursion bisects the longer side (the paper's
// Lemma 1), so a patch of 1/2^e of the grid is the grid with its longer side
// halved e times; a non-power-of-two share shrinks the longer side by the rest.
struct PatchSides {
  double rows, cols;  // along M (A row blocks), along N (B column blocks)
};

PatchSides patch_sides(std::int64_t mb, std::int64_t nb, double tiles) {
  double rows = double(mb), cols = double(nb);
  double parts = rows * cols / tiles;
  for (; parts >= 2; parts /= 2) (rows >= cols ? rows : cols) /= 2;
  if (parts > 1) (rows >= cols ? rows : cols) /= parts;
  return {std::max(rows, 1.0), std::max(cols, 1.0)};
}

// What the busiest thread does for one K_layers value. The engine hands the
// Mb*Nb*K_layers tasks (layer-major) to the threads in contiguous stretches
// (on a quiet machine threads rarely take each other's: core/src/
// task_stretches.hpp), so the first thread holds the most: whole
// layers when a chunk is larger than a layer, then one patch of the next.
struct ThreadShare {
  double tiles;         // C tiles it computes, over all its layers
  double panel_blocks;  // A row blocks x bm + B column blocks x bn of its patches (elements)
  double k_depth;       // K elements one layer contracts over (the deepest layer)
  double reduce_tiles;  // tiles of C it sums over the copies when K_layers > 1
};

ThreadShare thread_share(const Grid& g, int k_layers, int threads) {
  const std::int64_t tiles = g.mb * g.nb;
  const std::int64_t tasks = tiles * k_layers;
  const std::int64_t chunk = (tasks + threads - 1) / threads;
  const std::int64_t whole_layers = chunk / tiles, rest = chunk % tiles;
  double panel = double(whole_layers) * double(g.mb * g.blocks.bm + g.nb * g.blocks.bn);
  if (rest > 0) {
    const PatchSides p = patch_sides(g.mb, g.nb, double(rest));
    panel += p.rows * g.blocks.bm + p.cols * g.blocks.bn;
  }
  const std::int64_t layer_blocks = (g.kb + k_layers - 1) / k_layers;
  return {double(chunk), panel, double(layer_blocks * g.blocks.bk), double((tiles + threads - 1) / threads)};
}

// Compute rate of one core for `dtype`, from the fp32 gamma: the vector lanes
// hold half as many f64 and (with AVX-512 BF16 dot products) twice the bf16
// multiply-adds per instruction.
double flops_per_second(const Calibration& c, DType dtype) {
  const double f32 = c.gamma_gflops_per_core * 1e9;
  return dtype == DType::f64 ? f32 / 2 : dtype == DType::bf16 ? f32 * 2 : f32;
}

// Whether gemm() on plain operands copies A, B and C as soon as there is more
// than one round: where the blocks of its layout (the loop transposed for a
// only (core/src/plan.cpp), and the copies cost more than rounds save: in the
// tuned fp32 tables one round won nearly all such row-major shapes, and one
// column of tiles has since kept C in place over rounds
// (c_in_place_over_rounds). Not bf16: its loop A is packed into VNNI pairs
// whatever the rounds
// (docs/experiments/2026-12-04-model-rounds-and-thin-shapes.md#rounds-that-make-gemm-copy-measured-2026-12-04-the-shipped-tables).
bool copies_for_rounds(const GemmShape& shape, DType dtype, int threads, Layout layout) {
  if (layout == Layout::blocked || dtype == DType::bf16) return false;
  const GemmShape loop = loop_shape(shape, layout);
  return !c_in_place_over_rounds(loop, choose_blocks(loop, dtype, threads, layout));
}

int usable_layers(const Grid& g) { return int(std::min<std::int64_t>(kMaxKLayers, g.kb)); }

// The engine runs at most a layer's K blocks as rounds (it clamps more).
int most_rounds(const Grid& g, int k_layers) {
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxKBlockFactor, g.kb / k_layers)));
}

int fitting_block_factor(const Grid& g, const ThreadShare& s, int k_layers, DType dtype,
                         double budget_bytes) {
  const std::int64_t layer_blocks = (g.kb + k_layers - 1) / k_layers;
  const int most = most_rounds(g, k_layers);
  for (int f = 1; f < most; ++f) {
    const double round_depth = double((layer_blocks + f - 1) / f) * g.blocks.bk;
    if (s.panel_blocks * round_depth * double(input_size(dtype)) <= budget_bytes) return f;
  }
  return most;
}

// What one K_layers value costs the busiest thread; `rounds` is the
// k_block_factor being priced.
struct ConfigCosts {
  double input_bytes;      // per A or B element
  double tiles;            // C tiles it computes
  double k_depth;          // K elements per layer
  double panel_elements;   // its patches' A row + B column elements, per K element
  double slab_elements;    // bm + bn: one tile's A and B, per K element
  double c_patch_bytes;    // its C tiles
  double compute_seconds;  // its FLOPs at gamma
  double memory_bytes;     // compulsory: panels once over the K depth, C once
  double reduce_bytes;     // its share of summing the copies
  double bandwidth;        // its share of beta, bytes/s
  int rounds = 1;
};

// Seconds of one configuration for the busiest thread: a roofline over its
// FLOPs, its compulsory traffic from memory (its patch's A and B panels over
// the layer's K depth, once, and its C tiles), and what it has to fetch again
// because L2 does not hold it, plus the reduction of the copies.
//
// Fetched again (the paper's condition (1), section II-E2):
// - A and B: when one round's panels of the thread's patch fit the budget,
//   every element is read once per round (no re-reads). Otherwise the tiles
//   lose the panel reuse: consecutive tiles of the curve share one of their
//   two slabs, which survives while `room` tiles' slabs fit in L2 (see
//   kSharedSlabRoom), so each tile reads about one new slab; when not even
//   that fits (a long K depth per kernel call), both, streaming through the
//   kernel.
// - C: an extra round re-reads and re-writes the thread's C tiles, free only
//   while they stay in cache next to one round's panels.
// Re-reads stream at `reread_rate` of the thread's bandwidth share: one
// core's demand misses, not the prefetched sweep beta was measured with.
//
// `memory_stall` of the compulsory traffic's time is added to the FLOPs
// rather than hidden behind them (see kMemoryStall).
double config_seconds(const ConfigCosts& c, double round_depth, double budget, double l2_bytes,
                      double reread_rate, double memory_stall, double room) {
  const double round_panels = c.panel_elements * round_depth * c.input_bytes;
  const double slabs = c.slab_elements * round_depth * c.input_bytes;  // one tile's A and B slabs
  double reread = 0;
  if (round_panels > budget)
    reread = c.tiles * c.slab_elements * c.k_depth * c.input_bytes * (room * slabs <= l2_bytes ? 0.5 : 1.0);
  if (c.rounds > 1 && c.c_patch_bytes + round_panels > budget) reread += (c.rounds - 1) * 2 * c.c_patch_bytes;
  const double memory = c.memory_bytes / c.bandwidth;
  return std::max({c.compute_seconds + memory_stall * memory, memory, reread / (reread_rate * c.bandwidth)}) +
         c.reduce_bytes / c.bandwidth;
}

}  // namespace

void check_prediction_request(const GemmShape& shape, int threads) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1 || shape.m > max_gemm_size || shape.n > max_gemm_size ||
      shape.k > max_gemm_size)
    throw Error("GEMM sizes must be in 1.." + std::to_string(max_gemm_size) + ", got M=" +
                std::to_string(shape.m) + " N=" + std::to_string(shape.n) + " K=" + std::to_string(shape.k));
  if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
}

AnalyticalModel::AnalyticalModel(const Calibration& calibration, std::size_t l2_bytes, double l2_fraction,
                                 double reread_rate, double memory_stall, double round_slab_fraction,
                                 double shared_slab_room)
    : calibration_(calibration),
      l2_bytes_(l2_bytes),
      l2_fraction_(l2_fraction),
      reread_rate_(reread_rate),
      memory_stall_(memory_stall),
      round_slab_fraction_(round_slab_fraction),
      shared_slab_room_(shared_slab_room) {}

bool AnalyticalModel::calibrated() const {
  return calibration_.gamma_gflops_per_core > 0 && calibration_.beta_gbytes_per_s > 0 && l2_bytes_ > 0;
}

int AnalyticalModel::block_factor(const GemmShape& shape, DType dtype, int threads, int k_layers) const {
  check_prediction_request(shape, threads);
  if (l2_bytes_ == 0 || thin_for_rounds(shape)) return 1;
  const Grid g = grid_of(shape, dtype, threads);
  const int layers = std::clamp(k_layers, 1, usable_layers(g));
  return fitting_block_factor(g, thread_share(g, layers, threads), layers, dtype,
                              l2_fraction_ * double(l2_bytes_));
}

ModelPrediction AnalyticalModel::predict(const GemmShape& shape, DType dtype, int threads,
                                         Layout layout) const {
  check_prediction_request(shape, threads);
  if (!calibrated())
    throw Error(
        "the analytical model needs the platform's calibration (run `sfc-tune calibrate`) "
        "and its L2 size");
  const Grid g = priced_grid(shape, dtype, threads, layout);
  const bool one_round = copies_for_rounds(shape, dtype, threads, layout) || thin_for_rounds(shape);
  const double in = double(input_size(dtype)), out = double(output_size(dtype));
  const double tile = double(g.blocks.bm) * g.blocks.bn;
  const double gamma = flops_per_second(calibration_, dtype);
  const double stall = reads_in_place(shape, g, layout) ? memory_stall_ : 0.0;

  ModelPrediction p;
  p.seconds.fill(std::numeric_limits<double>::infinity());
  double best = std::numeric_limits<double>::infinity();
  for (int layers = 1; layers <= usable_layers(g); ++layers) {
    const ThreadShare s = thread_share(g, layers, threads);
    ConfigCosts c;
    c.input_bytes = in;
    c.tiles = s.tiles;
    c.k_depth = s.k_depth;
    c.panel_elements = s.panel_blocks;
    c.slab_elements = double(g.blocks.bm + g.blocks.bn);
    c.c_patch_bytes = s.tiles * tile * out;
    c.compute_seconds = 2.0 * s.tiles * tile * s.k_depth / gamma;
    c.memory_bytes = s.panel_blocks * s.k_depth * in + c.c_patch_bytes;
    // Summing the copies reads K_layers tiles and writes one, after a barrier.
    c.reduce_bytes = layers > 1 ? s.reduce_tiles * tile * out * (layers + 1) : 0.0;
    // Every thread streams at once, so each gets its share of the bandwidth.
    c.bandwidth = calibration_.beta_gbytes_per_s * 1e9 / threads;
    const std::int64_t layer_blocks = (g.kb + layers - 1) / layers;
    const int most = one_round ? 1 : most_rounds(g, layers);
    // Rounds kept shallow where extra ones re-read no C (see kRoundSlabL2Fraction).
    const bool capped = layout == Layout::blocked && c.c_patch_bytes <= double(l2_bytes_);
    const int clamped_rounds = most_rounds(g, layers);
    for (int f = 1; f <= clamped_rounds; ++f) {
      c.rounds = f;
      const double depth = double((layer_blocks + f - 1) / f) * g.blocks.bk;
      const double seconds = config_seconds(c, depth, l2_fraction_ * double(l2_bytes_), double(l2_bytes_),
                                            reread_rate_, stall, shared_slab_room_);
      const bool skipped =
          f > most ||
          (capped && f < most && c.slab_elements * depth * in > round_slab_fraction_ * double(l2_bytes_));
      p.config_seconds[Knobs{layers, f}.index()] =
          seconds * (skipped ? 1 + kSkippedRoundsPenalty * (f - 1) : 1.0);
      if (skipped) continue;
      p.seconds[layers - 1] = std::min(p.seconds[layers - 1], seconds);
      // Fewer layers, then fewer rounds, unless clearly faster.
      if (seconds < best * (1 - 1e-9)) {
        best = seconds;
        p.knobs = {layers, f};
      }
    }
  }
  // What the engine clamps runs as the configuration it clamps to.
  for (int i = 0; i < kConfigCount; ++i) {
    const Knobs k = Knobs::at(i);
    const int layers = std::min(k.k_layers, usable_layers(g));
    const int rounds = std::min(k.k_block_factor, most_rounds(g, layers));
    p.config_seconds[i] = p.config_seconds[Knobs{layers, rounds}.index()];
  }
  return p;
}

}  // namespace sfc
