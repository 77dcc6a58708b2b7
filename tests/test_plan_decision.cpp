// decide() (sfc/plan_decision.hpp): the pure planning step agrees with what
// every GemmPlan built from it reports, prints itself, and names a block
// strategy whose experiment record exists.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sfc/gemm.hpp"
#include "sfc/plan_decision.hpp"

using namespace sfc;

namespace {

// f32, f64, and bf16 where this CPU has kernels for it.
std::vector<DType> dtypes_here() {
  std::vector<DType> dtypes = {DType::f32, DType::f64};
  try {
    GemmPlan probe({.shape = {16, 16, 16}, .dtype = DType::bf16});
    dtypes.push_back(DType::bf16);
  } catch (const Error&) {  // no bf16 kernels on this CPU
  }
  return dtypes;
}

// Small, thin, one-column, ragged and large-K shapes, plus a fixed spread.
std::vector<GemmShape> shapes() {
  std::vector<GemmShape> out = {
      {1, 1, 1},        {1, 4096, 512},    {4096, 1, 512},    {2048, 2048, 1},   {64, 64, 100000},
      {5, 5, 70000},    {2048, 1024, 64},  {8192, 64, 512},   {64, 8192, 512},   {4096, 96, 2048},
      {96, 4096, 2048}, {3000, 200, 3000}, {200, 3000, 3000}, {10000, 8, 2000},  {8, 10000, 2000},
      {513, 129, 1000}, {129, 513, 1000},  {4096, 16, 16},    {16, 4096, 16},    {1000, 6000, 16},
      {6000, 1000, 16}, {2, 3000, 700},    {3000, 2, 700},    {12288, 150, 512}, {150, 12288, 512},
      {65, 65, 65},     {300, 300, 700},   {6000, 600, 1100}, {2000, 3000, 700}, {256, 512, 1024}};
  const std::int64_t dims[] = {1,   2,   3,   7,   8,   17,  33,  63,   64,  100,
                               128, 130, 192, 256, 300, 512, 777, 1024, 1536};
  unsigned seed = 2026;
  const auto next = [&] {
    seed = seed * 1103515245u + 12345u;
    return std::size_t(seed >> 8) % std::size(dims);
  };
  while (out.size() < 130) out.push_back({dims[next()], dims[next()], dims[next()]});
  return out;
}

bool same(const BlockSizes& a, const BlockSizes& b) { return a.bm == b.bm && a.bn == b.bn && a.bk == b.bk; }

}  // namespace

TEST_CASE("plan decision: decide() is what every GemmPlan reports") {
  const ArchContext arch = ArchContext::detect();
  const int knobs[][2] = {{1, 1}, {2, 1}, {1, 4}, {2, 4}, {4, 2}, {8, 8}};
  const Layout layouts[] = {Layout::blocked, Layout::row_major, Layout::col_major};
  int plans = 0, in_place = 0, streaming = 0, panels = 0, row_tasks = 0;
  std::size_t pick = 0;
  for (const GemmShape& shape : shapes())
    for (const DType dtype : dtypes_here())
      for (const Layout layout : layouts)
        for (const int threads : {1, 2, 3}) {
          const int* knob = knobs[pick++ % std::size(knobs)];
          const PlanRequest request{.shape = shape,
                                    .dtype = dtype,
                                    .threads = threads,
                                    .k_layers = knob[0],
                                    .k_block_factor = knob[1],
                                    .layout = layout};
          CAPTURE(to_string(shape));
          CAPTURE(to_string(dtype));
          CAPTURE(to_string(layout));
          CAPTURE(threads);
          CAPTURE(knob[0]);
          CAPTURE(knob[1]);
          const PlanDecision d = decide(request, arch);
          const GemmPlan plan(request);
          ++plans;
          CHECK(same(d.caller_blocks(), plan.blocks()));
          CHECK(d.caller_mb() == plan.mb());
          CHECK(d.caller_nb() == plan.nb());
          CHECK(d.kb == plan.kb());
          CHECK(d.threads == plan.threads());
          CHECK(d.k_layers == plan.k_layers());
          CHECK(d.k_block_factor == plan.k_block_factor());
          CHECK(d.stream_c == plan.streams_c());
          CHECK(d.kernel() == plan.kernel());
          CHECK(d.workspace_bytes == plan.workspace_bytes());
          CHECK((d.transposed ? d.b_elements() : d.a_elements()) == plan.a_elements());
          CHECK((d.transposed ? d.a_elements() : d.b_elements()) == plan.b_elements());
          CHECK(d.c_elements() == plan.c_elements());
          if (layout != Layout::blocked) {
            const bool row = layout == Layout::row_major;
            const GemmCopies tight = plan.copies(layout, row ? shape.k : shape.m, row ? shape.n : shape.k,
                                                 row ? shape.n : shape.m);
            CHECK(d.tight_copies == tight);
            in_place += !tight.c;
          }
          // The plan keeps the decision it was built from.
          CHECK(plan.decision().describe() == d.describe());
          streaming += d.stream_c;
          panels += d.panels_a || d.panels_b;
          row_tasks += d.row_tasks;
        }
  // The sweep reaches the paths decide() chooses between.
  CHECK(plans >= 1000);
  CHECK(in_place > 0);
  CHECK(streaming > 0);
  CHECK(panels > 0);
  CHECK(row_tasks > 0);
}

TEST_CASE("plan decision: requested blocks override the rule and are named") {
  const ArchContext arch = ArchContext::detect();
  const PlanDecision d = decide(
      {.shape = {300, 200, 100}, .blocks = {.bm = 32, .bn = 0, .bk = 0}, .layout = Layout::row_major}, arch);
  CHECK(d.caller_blocks().bm == 32);
  CHECK(d.block_choice.strategy == BlockStrategy::requested);
  const GemmPlan plan(
      {.shape = {300, 200, 100}, .blocks = {.bm = 32, .bn = 0, .bk = 0}, .layout = Layout::row_major});
  CHECK(same(plan.blocks(), d.caller_blocks()));
}

TEST_CASE("plan decision: the block rule names its regime") {
  const ArchContext arch = ArchContext::detect();
  const auto strategy = [&](GemmShape shape, Layout layout, DType dtype = DType::f32) {
    return decide({.shape = shape, .dtype = dtype, .threads = 2, .layout = layout}, arch)
        .block_choice.strategy;
  };
  CHECK(strategy({256, 256, 256}, Layout::blocked) == BlockStrategy::target_split);
  CHECK(strategy({4096, 4096, 16}, Layout::blocked) == BlockStrategy::tall_tiles);  // a K of one block
  CHECK(strategy({16, 4096, 4096}, Layout::col_major) == BlockStrategy::thin_columns);
  CHECK(strategy({256, 512, 1024}, Layout::col_major) == BlockStrategy::wide_tiles);
  CHECK(strategy({300, 300, 700}, Layout::row_major) == BlockStrategy::divisors);  // bk 50 divides K
  CHECK(strategy({100, 100, 100}, Layout::blocked) == BlockStrategy::whole_vectors);
  // choose_blocks() is the same rule.
  for (const GemmShape s : {GemmShape{2501, 7, 300}, GemmShape{6000, 600, 1100}, GemmShape{16, 4096, 4099}})
    for (const Layout layout : {Layout::blocked, Layout::col_major})
      CHECK(same(choose_blocks(s, DType::f32, 2, layout),
                 decide({.shape = s, .threads = 2, .layout = layout}, arch).blocks()));
}

TEST_CASE("plan decision: the machine is an argument") {
  // AMX tiles without the hardware: bf16 K in whole tile steps, on the AMX kernel.
  ArchContext amx = ArchContext::detect();
  amx.amx_tiles = amx.amx_kernels = true;
  const PlanDecision d = decide({.shape = {256, 256, 100}, .dtype = DType::bf16, .threads = 2}, amx);
  CHECK(d.blocks().bk % 32 == 0);
  CHECK(d.block_choice.applied(BlockStrategy::amx_k_steps));
  CHECK(d.kernel() == "amx");
  CHECK(d.blocked_kernels == KernelFamily::amx);
  // A forked child runs every request on one thread; 0 threads is the default.
  ArchContext child = ArchContext::detect();
  child.one_thread = true;
  CHECK(decide({.shape = {512, 512, 512}, .threads = 8}, child).threads == 1);
  child.one_thread = false;
  child.default_threads = 5;
  CHECK(decide({.shape = {512, 512, 512}}, child).threads == 5);
}

TEST_CASE("plan decision: bad requests are refused as GemmPlan refuses them") {
  const ArchContext arch = ArchContext::detect();
  CHECK_THROWS_WITH_AS(decide({.shape = {0, 4, 4}}, arch), doctest::Contains("must be positive"), Error);
  CHECK_THROWS_WITH_AS(decide({.shape = {4, 4, 4}, .k_layers = 9}, arch), doctest::Contains("k_layers"),
                       Error);
  CHECK_THROWS_WITH_AS(decide({.shape = {64, 64, 64}, .dtype = DType::bf16, .blocks = {0, 0, 7}}, arch),
                       doctest::Contains("even bk"), Error);
  CHECK_THROWS_AS(GemmPlan({.shape = {0, 4, 4}}), Error);
}

TEST_CASE("plan decision: describe() prints every choice and the strategy's record") {
  const PlanDecision d =
      decide({.shape = {4096, 4096, 16}, .threads = 2, .layout = Layout::row_major}, ArchContext::detect());
  const std::vector<std::string> lines = d.describe();
  std::ostringstream printed;
  printed << d;
  std::string joined;
  for (const std::string& line : lines) joined += line + "\n";
  CHECK(printed.str() == joined);
  for (const char* fact : {"shape: 4096x4096x16 f32 row", "blocks: ", "block strategy: ", "k_layers: ",
                           "streams C: ", "kernels: libxsmm", "tight call copies: ", "workspace: "})
    CHECK_MESSAGE(joined.find(fact) != std::string::npos, fact);
  CHECK(joined.find(std::string(block_strategy_info(d.block_choice.strategy).record)) != std::string::npos);
}

TEST_CASE("plan decision: every block strategy has a name, a reason and an existing record") {
  for (unsigned i = 0; i < kBlockStrategyCount; ++i) {
    const BlockStrategyInfo& info = block_strategy_info(BlockStrategy(i));
    CAPTURE(i);
    CHECK(!info.name.empty());
    CHECK(!info.reason.empty());
    if (BlockStrategy(i) == BlockStrategy::requested) continue;  // the caller's choice: no record
    const std::string record(info.record.substr(0, info.record.find('#')));
    CHECK_MESSAGE(std::filesystem::exists(std::filesystem::path(SFC_SOURCE_DIR) / record), record);
  }
}
