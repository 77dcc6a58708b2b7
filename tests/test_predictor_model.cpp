// AnalyticalModel on textbook cases: where the roofline must favour extra
// copies of C, where it must not, and the L2 rule for k_block_factor.
#include <doctest/doctest.h>

#include <cmath>

#include "sfc/analytical_model.hpp"
#include "sfc/error.hpp"
#include "sfc/gemm.hpp"

using namespace sfc;

namespace {
constexpr std::size_t l2 = 1 << 20;
const Calibration fast_memory{200, 400};  // GFLOP/s per core, GB/s: compute bound
const Calibration slow_memory{200, 1};    // memory bound everywhere
// The 2-core Xeon of the wide tables (docs/experiments): its calibration
// (gamma per core, beta for both threads) and 2 MiB of L2.
const Calibration xeon{104, 17};
constexpr std::size_t xeon_l2 = 2 << 20;

// Elements of A and B one kernel call contracts per tile (bm + bn) x depth.
std::int64_t call_depth(const GemmShape& s, Knobs k) {
  const std::int64_t kb = (s.k + 63) / 64;
  const std::int64_t layer = (kb + k.k_layers - 1) / k.k_layers;
  return (layer + k.k_block_factor - 1) / k.k_block_factor * 64;
}
}  // namespace

TEST_CASE("model: large K with small M, N and little bandwidth splits K into layers") {
  const AnalyticalModel model(slow_memory, l2);
  // 256 x 256 output tiles cannot feed 2 threads' A/B reuse: the K split
  // halves the panel traffic per thread for a small reduction.
  const ModelPrediction p = model.predict({256, 256, 65536}, DType::f32, 2);
  CHECK(p.knobs.k_layers > 1);
  CHECK(p.seconds[p.knobs.k_layers - 1] < p.seconds[0]);
  // And with many threads, where each thread's patch is small (2.5D/3D).
  CHECK(model.predict({1024, 1024, 16384}, DType::f32, 64).knobs.k_layers > 1);
}

TEST_CASE("model: a tiny K stays on one layer") {
  const AnalyticalModel model(slow_memory, l2);
  CHECK(model.predict({4096, 4096, 32}, DType::f32, 2).knobs.k_layers == 1);
  const ModelPrediction p = model.predict({4096, 4096, 128}, DType::f32, 2);
  CHECK(p.knobs.k_layers == 1);
  // 128 = 2 K blocks of 64: a third layer does not exist for this shape.
  CHECK(std::isinf(p.seconds[2]));
}

TEST_CASE("model: compute-bound square shapes keep one copy of C") {
  const AnalyticalModel model(fast_memory, l2);
  CHECK(model.predict({2048, 2048, 2048}, DType::f32, 2).knobs.k_layers == 1);
}

TEST_CASE("model: too few tiles for the threads are split along K") {
  // One 64 x 64 tile: with one layer, one thread idles; two layers share it.
  const AnalyticalModel model(fast_memory, l2);
  CHECK(model.predict({64, 64, 8192}, DType::f32, 2).knobs.k_layers == 2);
}

TEST_CASE("model: a long K over a few C tiles is cut into layers or rounds, not streamed in one call") {
  // 128 x 96 x 7712 on 2 threads: 2 x 2 tiles, 121 K blocks. In one call a
  // tile's A and B slabs are (64 + 48) x 7712 x 4 bytes = 3.3 MiB, more than
  // L2: consecutive tiles lose their shared slab and the kernel streams both
  // (measured far slower than the winner:
  // docs/experiments/2026-12-01-model-where-thin-xeon.md). The model cuts K until two
  // tiles' slabs fit L2.
  const AnalyticalModel model(xeon, xeon_l2);
  for (const GemmShape s :
       {GemmShape{128, 96, 7712}, GemmShape{384, 224, 10112}, GemmShape{96, 448, 23968}}) {
    CAPTURE(s.k);
    const ModelPrediction p = model.predict(s, DType::f32, 2);
    CHECK(p.knobs != Knobs{1, 1});
    CHECK(2 * 128 * call_depth(s, p.knobs) * 4 <= std::int64_t(xeon_l2));
    CHECK(p.seconds[p.knobs.k_layers - 1] < p.seconds[0] * 1.0001);
  }
}

TEST_CASE("model: fewer C tiles than threads take as many layers as keep every thread busy") {
  // 64 x 128: 2 tiles for 8 threads. One layer leaves 6 threads idle; 4
  // layers give each thread a tile over a quarter of K.
  CHECK(AnalyticalModel(fast_memory, l2).predict({64, 128, 4096}, DType::f32, 8).knobs.k_layers >= 4);
  CHECK(AnalyticalModel(xeon, xeon_l2).predict({64, 128, 4096}, DType::f32, 8).knobs.k_layers >= 4);
}

TEST_CASE("model: rounds only where each thread's C tiles stay in L2 between them") {
  // 4096 x 4096 x 1024 on 2 threads: each thread's 2048 tiles of C (32 MiB)
  // cannot stay in L2, so an extra round re-reads and re-writes them all; the
  // L2 rule alone (the panels of one round) would ask for the most rounds.
  const AnalyticalModel paper(fast_memory, l2, 0.5);
  CHECK(paper.block_factor({4096, 4096, 1024}, DType::f32, 2, 1) == 8);
  CHECK(paper.predict({4096, 4096, 1024}, DType::f32, 2).knobs == Knobs{1, 1});
  CHECK(AnalyticalModel(xeon, xeon_l2).predict({1728, 1600, 1088}, DType::f32, 2).knobs == Knobs{1, 1});
  // 96 x 96 x 8192 through the row-major entry: 4 tiles of 48 x 48 (36 KiB
  // of C), panels of 7.5 MiB per thread and K: rounds cost almost nothing and
  // keep the slabs in L2.
  const ModelPrediction small_c =
      AnalyticalModel(Calibration{200, 60}, l2).predict({96, 96, 8192}, DType::f32, 2, Layout::row_major);
  CHECK(small_c.knobs.k_block_factor > 1);
}

TEST_CASE("model: the blocked entry's cold panels make fewer bytes per thread win on few tiles") {
  // 128 x 96 x 7712 on 2 threads (this Zen 5's calibration): 4 tiles, so each
  // thread reads A and B panels almost the whole grid wide over all of K.
  // Two K layers halve what each thread reads; the blocked entry's kernels
  // wait for those cold panels (kMemoryStall), and two layers were measured
  // ahead of one there. The row-major entry's copy warms the panels first:
  // the roofline sees no gain in a second layer.
  const AnalyticalModel zen5(Calibration{202, 34}, l2);
  CHECK(zen5.predict({128, 96, 7712}, DType::f32, 2, Layout::blocked).knobs.k_layers == 2);
  CHECK(zen5.predict({128, 96, 7712}, DType::f32, 2, Layout::row_major).knobs.k_layers == 1);
  const AnalyticalModel roofline(Calibration{202, 34}, l2, kPanelL2Fraction, kRereadRate, 0.0);
  CHECK(roofline.predict({128, 96, 7712}, DType::f32, 2, Layout::blocked).knobs.k_layers == 1);
}

TEST_CASE("model: the blocked entry keeps a round's tile slabs within a share of L2 where rounds are cheap") {
  // 64 x 4832 x 4096 bf16 on this Zen 5's calibration: one row of 76 tiles,
  // 38 per thread, their C (1.2 MiB) within L2 on every extra round; the
  // winner there cuts K into 8 rounds ((1, 8), well ahead of the (1, 2) the
  // roofline priced alike). Capped, one tile's slabs of a round, (64 + 64) x
  // depth x 2 bytes, stay within kRoundSlabL2Fraction of L2.
  const Calibration zen5{207, 33};
  const GemmShape wide{64, 4832, 4096};
  const Knobs capped = AnalyticalModel(zen5, l2).predict(wide, DType::bf16, 2).knobs;
  const AnalyticalModel uncapped(zen5, l2, kPanelL2Fraction, kRereadRate, kMemoryStall, INFINITY);
  CHECK(uncapped.predict(wide, DType::bf16, 2).knobs != capped);  // else this checks nothing
  CHECK(128 * call_depth(wide, capped) * 2 <= std::int64_t(kRoundSlabL2Fraction * double(l2)));
  // The row-major entry runs deeper rounds well: no cap there.
  CHECK(AnalyticalModel(zen5, l2).predict(wide, DType::bf16, 2, Layout::row_major).knobs ==
        uncapped.predict(wide, DType::bf16, 2, Layout::row_major).knobs);
  // Where each thread's C tiles exceed L2 every round re-reads them: the
  // roofline decides (2048^3 fp32, 8 MiB of C per thread).
  CHECK(AnalyticalModel(zen5, l2).predict({2048, 2048, 2048}, DType::f32, 2).knobs ==
        uncapped.predict({2048, 2048, 2048}, DType::f32, 2).knobs);
}

TEST_CASE("model: plain fp32 operands that gemm() would copy for more rounds take one") {
  // 128 x 1009 x 1000 row-major: the loop's M (1009, a prime) is ragged in
  // its blocks and its N (128) two columns of tiles, so gemm() writes C in
  // place with one round only and copies A, B and C for more (1.5-3.5x
  // slower measured). The model answers one round there, where on the same
  // shape with M divided (1024) its roofline (memory at 10 GB/s) wants six.
  const GemmShape ragged{128, 1009, 1000}, divided{128, 1024, 1000};
  PlanRequest request{.shape = ragged, .dtype = DType::f32, .threads = 2, .layout = Layout::row_major};
  CHECK_FALSE(GemmPlan(request).copies(Layout::row_major, ragged.k, ragged.n, ragged.n).c);
  request.k_block_factor = 2;
  REQUIRE(GemmPlan(request).copies(Layout::row_major, ragged.k, ragged.n, ragged.n).c);
  const AnalyticalModel model(Calibration{200, 10}, l2);
  REQUIRE(model.predict(divided, DType::f32, 2, Layout::row_major).knobs.k_block_factor > 1);
  CHECK(model.predict(ragged, DType::f32, 2, Layout::row_major).knobs.k_block_factor == 1);
  // One column of tiles (the loop's N, 64, within one block) keeps C in place
  // over rounds, ragged or not: nothing for the rule to avoid, and the model
  // answers rounds there as where M is divided.
  request.shape = {64, 1009, 1000};
  CHECK_FALSE(GemmPlan(request).copies(Layout::row_major, 1000, 1009, 1009).c);
  CHECK(model.predict({64, 1009, 1000}, DType::f32, 2, Layout::row_major).knobs ==
        model.predict({64, 1024, 1000}, DType::f32, 2, Layout::row_major).knobs);
  CHECK(model.predict({64, 1009, 1000}, DType::f32, 2, Layout::row_major).knobs.k_block_factor > 1);
}

TEST_CASE("model: shapes with M or N below kOneRoundBelow take one round") {
  // 4 x 1024 x 1000 and its transpose: where memory is slow (10 GB/s) the
  // roofline alone answers rounds (as for 64 x 1024 x 1000), thin or not.
  const AnalyticalModel model(Calibration{200, 10}, l2);
  for (Layout layout : {Layout::blocked, Layout::row_major, Layout::col_major}) {
    CAPTURE(to_string(layout));
    CHECK(model.predict({4, 1024, 1000}, DType::f32, 2, layout).knobs.k_block_factor == 1);
    CHECK(model.predict({1024, 4, 1000}, DType::f32, 2, layout).knobs.k_block_factor == 1);
    CHECK(model.predict({64, 1024, 1000}, DType::f32, 2, layout).knobs.k_block_factor > 1);
  }
  // The L2 rule alone (no calibration) likewise: 32 x 2048 x 2048 would ask for rounds by its panels.
  const AnalyticalModel uncalibrated({}, l2);
  CHECK(uncalibrated.block_factor({32, 2048, 2048}, DType::f32, 2, 1) == 1);
  CHECK(uncalibrated.block_factor({2048, 32, 2048}, DType::f32, 2, 1) == 1);
  CHECK(uncalibrated.block_factor({64, 2048, 2048}, DType::f32, 2, 1) > 1);
}

TEST_CASE("model: a thin shape through a plain layout is priced on the grid that runs") {
  // 2491 x 7 x 4183 row-major runs one row of 312 tiles 7 x 8 (the loop is the
  // transpose, and a thin M of the loop takes thin columns), which all share
  // one A row block: one layer wins in the tables (fp32 and bf16, Zen 5). The
  // blocked grid of the shape, one column of 39 tiles 64 x 7, re-reads its
  // panels over the long K and wanted layers. Zen 5's calibration and fit
  // (gamma per core, beta, l2_fraction).
  const AnalyticalModel zen5(Calibration{208.1, 33.8}, l2, 2.0);
  const GemmShape thin{2491, 7, 4183};
  const BlockSizes runs =
      choose_blocks(loop_shape(thin, Layout::row_major), DType::f32, 2, Layout::row_major);
  REQUIRE(runs.bm == 7);
  REQUIRE(runs.bn == 8);
  CHECK(zen5.predict(thin, DType::f32, 2, Layout::row_major).knobs == Knobs{1, 1});
  CHECK(zen5.predict({7, 2491, 4183}, DType::f32, 2, Layout::col_major).knobs == Knobs{1, 1});
  CHECK(zen5.predict({8608, 5, 6784}, DType::bf16, 2, Layout::row_major).knobs.k_layers == 1);
}

TEST_CASE("model: k_block_factor is the smallest that fits the panels in L2") {
  const AnalyticalModel model(fast_memory, l2, 0.5);
  // 128 x 128 x 256, 2 threads: each thread's patch is 64 x 128 (one 64 row
  // block, two 64 column blocks), 192 panel rows x 256 K x 4 bytes = 192 KiB,
  // within half of 1 MiB already.
  CHECK(model.block_factor({128, 128, 256}, DType::f32, 2, 1) == 1);
  // 2048 x 2048 x 2048: 3072 panel rows x 2048 x 4 = 24 MiB; even 8 rounds
  // (3 MiB) do not fit, so the most rounds possible.
  CHECK(model.block_factor({2048, 2048, 2048}, DType::f32, 2, 1) == 8);
  // 512 x 512 x 512: 768 rows x 512 x 4 = 1.5 MiB -> 3 rounds (4 blocks of K
  // per round at most -> 3 rounds of 3, 3, 2 blocks: 576 KiB > 512 KiB) -> 4.
  CHECK(model.block_factor({512, 512, 512}, DType::f32, 2, 1) == 4);
  // Unknown L2: the rule cannot apply.
  CHECK(AnalyticalModel(fast_memory, 0).block_factor({512, 512, 512}, DType::f32, 2, 1) == 1);
}

TEST_CASE("model: refuses bad input and a missing calibration") {
  const AnalyticalModel model(fast_memory, l2);
  CHECK_THROWS_AS(model.predict({0, 64, 64}, DType::f32, 2), Error);
  CHECK_THROWS_AS(model.predict({64, -1, 64}, DType::f32, 2), Error);
  CHECK_THROWS_AS(model.predict({64, 64, 64}, DType::f32, 0), Error);
  CHECK_THROWS_AS(model.predict({64, std::int64_t(1) << 40, 64}, DType::f32, 2), Error);
  const AnalyticalModel uncalibrated(Calibration{}, l2);
  CHECK_FALSE(uncalibrated.calibrated());
  CHECK_THROWS_AS(uncalibrated.predict({64, 64, 64}, DType::f32, 2), Error);
}

TEST_CASE("model: a thin shape's plain entry waits for the operand it reads in place") {
  // 45 x 1243 x 13939 row-major runs one column of tiles (the loop's N is the
  // caller's M), and gemm() reads the big operand, the caller's B, in place:
  // as in the blocked entry, each first touch of a cold panel is a demand
  // miss, so the stall counts. Zen 5's calibration (gamma per core, beta)
  // and its fp32 fit (L2 fraction 0.5, re-read rate 0.5,
  // round slabs 0.3, room for one tile's slabs).
  const Calibration zen5{208.1, 33.8};
  const AnalyticalModel waits(zen5, l2, 0.5, 0.5, kMemoryStall, 0.3, 1.0);
  const AnalyticalModel never_waits(zen5, l2, 0.5, 0.5, 0.0, 0.3, 1.0);
  for (const Layout layout : {Layout::row_major, Layout::col_major}) {
    const GemmShape thin =
        layout == Layout::row_major ? GemmShape{45, 1243, 13939} : GemmShape{1243, 45, 13939};
    CAPTURE(int(layout));
    CHECK(waits.predict(thin, DType::f32, 2, layout).seconds[0] >
          never_waits.predict(thin, DType::f32, 2, layout).seconds[0]);
  }
  // A shape the entry copies first, in a sweep the prefetchers cover: no stall.
  const GemmShape square{1024, 1024, 1024};
  CHECK(waits.predict(square, DType::f32, 2, Layout::row_major).seconds ==
        never_waits.predict(square, DType::f32, 2, Layout::row_major).seconds);
}
