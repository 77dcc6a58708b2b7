// `sfc-tune gemm M N K`: run one GEMM shape with one configuration, timed with
// cold inputs, optionally checked against an fp64 reference.
#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "sfc/gemm.hpp"
#include "sfc/measure.hpp"
#include "sfc/plan_decision.hpp"
#include "sfc/verify.hpp"

namespace sfc::cli {
namespace {

// "BMxBNxBK"; 0 leaves that size to the block rule. Each size is read whole
// (from_chars): a value past int's range is refused, not wrapped.
BlockSizes parse_blocks(const std::string& text) {
  const auto refuse = [&] {
    return CLI::ValidationError(
        "--blocks", "expected BMxBNxBK with sizes 0..4096 (0: the block rule's), got '" + text + "'");
  };
  int sizes[3] = {};
  const char* at = text.data();
  const char* const end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    if (i > 0 && (at == end || *at++ != 'x')) throw refuse();
    const auto [next, error] = std::from_chars(at, end, sizes[i]);
    if (error != std::errc() || next == at || sizes[i] < 0 || sizes[i] > 4096) throw refuse();
    at = next;
  }
  if (at != end) throw refuse();
  BlockSizes b;
  b.bm = sizes[0];
  b.bn = sizes[1];
  b.bk = sizes[2];
  return b;
}

struct GemmOptions {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "f32", layout = "blocked", blocks;
  int threads = 0, k_layers = 1, kbf = 1, reps = 10, warmup = 2;
  bool check = false, json = false;
};

void run_gemm(const GemmOptions& o) {
  std::FILE* const out = human_output(o.json);
  PlanRequest request;
  request.shape = {o.m, o.n, o.k};
  request.dtype = parse_dtype(o.dtype);
  request.layout = parse_layout(o.layout);
  request.threads = o.threads;
  request.k_layers = o.k_layers;
  request.k_block_factor = o.kbf;
  if (!o.blocks.empty()) request.blocks = parse_blocks(o.blocks);
  ColdOperands::check_fits(request.shape, request.dtype);  // before planning what cannot run
  GemmPlan plan(request);
  const BlockSizes bs = plan.blocks();
  spdlog::info(
      "plan: {}x{}x{} {} on {} threads, K_layers={} k_block_factor={} (effective), blocks {}x{}x{}, kernel "
      "{}",
      o.m, o.n, o.k, o.dtype, plan.threads(), plan.k_layers(), plan.k_block_factor(), bs.bm, bs.bn, bs.bk,
      plan.kernel());
  for (const std::string& line : plan.decision().describe()) spdlog::debug("plan decision: {}", line);

  ColdOperands inputs(plan, request.layout, o.warmup + o.reps);
  spdlog::info("timing {} warm-up + {} runs over {} cold input set(s)", o.warmup, o.reps, inputs.sets());
  const Timing t = inputs.time(plan, o.warmup, o.reps);
  // The headline is the fastest run, as tune ranks and bench reports; the
  // mean goes beside it.
  const double gflops = plan.shape().flops() / t.min * 1e-9;
  const double mean_gflops = plan.shape().flops() / t.mean * 1e-9;

  nlohmann::json j = {{"m", o.m},
                      {"n", o.n},
                      {"k", o.k},
                      {"dtype", o.dtype},
                      {"threads", plan.threads()},
                      {"k_layers", plan.k_layers()},
                      {"k_block_factor", plan.k_block_factor()},
                      {"bm", bs.bm},
                      {"bn", bs.bn},
                      {"bk", bs.bk},
                      {"kernel", std::string(plan.kernel())},
                      {"layout", std::string(to_string(request.layout))},
                      {"reps", o.reps},
                      {"statistic", "min"},
                      {"min_seconds", t.min},
                      {"mean_seconds", t.mean},
                      {"stddev_seconds", t.stddev},
                      {"gflops", gflops},
                      {"mean_gflops", mean_gflops}};
  std::fprintf(out,
               "%lldx%lldx%lld %s threads=%d k_layers=%d k_block_factor=%d blocks=%dx%dx%d layout=%s: "
               "fastest %s (%.1f GFLOP/s), mean %s (sd %s) over %d runs\n",
               (long long)o.m, (long long)o.n, (long long)o.k, o.dtype.c_str(), plan.threads(),
               plan.k_layers(), plan.k_block_factor(), bs.bm, bs.bn, bs.bk,
               std::string(to_string(request.layout)).c_str(), format_seconds(t.min).c_str(), gflops,
               format_seconds(t.mean).c_str(), format_seconds(t.stddev).c_str(), t.reps);
  if (o.check) {
    const CheckResult c = check_against_reference(plan, request.layout);
    std::fprintf(out, "relative error ||C - C_ref||_F / ||C_ref||_F = %.3e (bound %.3e): %s\n", c.rel_error,
                 c.bound, c.rel_error <= c.bound ? "ok" : "FAILED");
    j["rel_error"] = c.rel_error;
    j["error_bound"] = c.bound;
    if (!(c.rel_error <= c.bound)) {
      if (o.json) std::printf("%s\n", j.dump().c_str());
      throw CLI::RuntimeError("result check failed", 1);
    }
  }
  if (o.json) std::printf("%s\n", j.dump().c_str());
}

}  // namespace

void add_gemm_command(CLI::App& app) {
  auto o = std::make_shared<GemmOptions>();
  CLI::App* cmd =
      app.add_subcommand("gemm", "Run one GEMM shape C = A*B with one configuration, timed on cold inputs");
  cmd->add_option("M", o->m, "Rows of A and C")->required()->check(gemm_size);
  cmd->add_option("N", o->n, "Columns of B and C")->required()->check(gemm_size);
  cmd->add_option("K", o->k, "Columns of A, rows of B")->required()->check(gemm_size);
  cmd->add_option("--dtype", o->dtype, "Element type: f32, f64 or bf16 (bf16 inputs, f32 C)")
      ->check(CLI::IsMember({"f32", "f64", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "OpenMP threads (default: OMP_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--k-layers", o->k_layers, "Copies of C (2.5D/3D replication), 1..8")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  cmd->add_option("--k-block-factor,--kbf", o->kbf, "K rounds per layer, 1..8 (as tune's --k-block-factors)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  cmd->add_option("--blocks", o->blocks,
                  "Block sizes BMxBNxBK instead of the block rule's (0 keeps the rule's)");
  cmd->add_option("--layout", o->layout, "Operand layout: blocked (native), row or col (packing timed too)")
      ->check(CLI::IsMember({"blocked", "row", "col"}))
      ->capture_default_str();
  cmd->add_option("--reps", o->reps, "Timed repetitions")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed warm-up runs")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_flag("--check", o->check, "Compare C with an fp64 reference; print the relative Frobenius error");
  cmd->add_flag("--json", o->json, "stdout is one JSON object (the readable lines go to stderr)");
  cmd->callback([o] { run_gemm(*o); });
}

}  // namespace sfc::cli
