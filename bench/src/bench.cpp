#include "sfc/bench.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>

#include "sfc/aligned_buffer.hpp"
#include "sfc/bench_summary.hpp"
#include "sfc/clocks.hpp"
#include "sfc/config_set.hpp"
#include "sfc/tuner.hpp"
#include "sfc/verify.hpp"

namespace sfc {
namespace {

// Threads of the implementation that ran last keep a core busy for a while:
// OpenBLAS's workers spin for up to ~0.1 s after a call (and after the library
// is loaded), OpenMP runtimes spin at their barriers. On a machine with as many
// threads as cores they would slow whichever implementation is timed next, so
// every implementation waits this long before its timing starts.
constexpr auto kSettleTime = std::chrono::milliseconds(200);

// Quick search: these values of both knobs, screened with one run each; those
// within 10% of the best screen are timed with one warm-up and two runs.
constexpr const char* kSearchKnobs = "1,2,4,8";
constexpr int kSearchWarmup = 1, kSearchReps = 2;
constexpr double kSearchPruneMargin = 0.1;

PlanRequest plan_request(const GemmShape& shape, const BenchOptions& options, const Knobs& config) {
  return {.shape = shape,
          .dtype = options.dtype,
          .threads = options.threads,
          .k_layers = config.k_layers,
          .k_block_factor = config.k_block_factor,
          .layout = options.layout};
}

// The peers' timing uses the cold-input sets of `operands` like SFC-CA's, and
// their call (layout, transposes, alpha, beta): evicted before each timed
// run where ColdOperands evicts; else the caches are flushed before the timed
// runs whether or not ColdOperands would have (it flushes wherever its sets
// are fewer than the cold footprint, as with any footprint of a large L3).
Timing time_peer(const GemmPeer& peer, ColdOperands& operands, const GemmShape& shape,
                 const BenchOptions& options, int reps) {
  return time_runs(
      options.warmup, reps, operands.sets(), operands.evicts() ? 0 : cold_footprint_bytes(),
      [&](int set) {
        peer.gemm(options.dtype, operands.layout(), operands.arguments(), shape, operands.a(set),
                  operands.lda(), operands.b(set), operands.ldb(), operands.c(set), operands.ldc());
      },
      /*budget_seconds=*/0, options.threads, operands.eviction());
}

// Unit roundoff of the type C accumulates in.
double unit_roundoff(DType dtype) {
  return dtype == DType::f64 ? std::numeric_limits<double>::epsilon() / 2
                             : std::numeric_limits<float>::epsilon() / 2;
}

double output_element(const void* c, DType dtype, std::size_t i) {
  return dtype == DType::f64 ? static_cast<const double*>(c)[i] : double(static_cast<const float*>(c)[i]);
}

double input_element(const void* x, DType dtype, std::size_t i) {
  switch (dtype) {
    case DType::f64: return static_cast<const double*>(x)[i];
    case DType::f32: return static_cast<const float*>(x)[i];
    case DType::bf16: {
      const std::uint32_t bits = std::uint32_t(static_cast<const std::uint16_t*>(x)[i]) << 16;
      float value;
      std::memcpy(&value, &bits, sizeof value);
      return value;
    }
  }
  return 0;
}

// Element (row, col) of a plain matrix in `layout` with leading dimension ld.
std::size_t offset(Layout layout, std::int64_t row, std::int64_t col, std::int64_t ld) {
  return layout == Layout::row_major ? std::size_t(row * ld + col) : std::size_t(row + col * ld);
}

// Above this many multiply-adds (or entries of C) the reference covers
// sampled rows and columns of C only: the fp64 loop must stay a small part of
// a shape's time, and its list of entries small.
constexpr double kFullReferenceWork = 1 << 26, kFullReferenceEntries = 1 << 20;
constexpr std::int64_t kSampledLines = 8;

// The entries of C the reference checks: all of them for a small product,
// else kSampledLines whole rows and as many whole columns, evenly spaced.
std::vector<std::pair<std::int64_t, std::int64_t>> checked_entries(const GemmShape& s) {
  std::vector<std::pair<std::int64_t, std::int64_t>> entries;
  if (double(s.m) * double(s.n) * double(s.k) <= kFullReferenceWork &&
      double(s.m) * double(s.n) <= kFullReferenceEntries) {
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) entries.emplace_back(i, j);
    return entries;
  }
  const auto spaced = [](std::int64_t extent) {
    std::vector<std::int64_t> lines;
    const std::int64_t count = std::min(extent, kSampledLines);
    for (std::int64_t l = 0; l < count; ++l) lines.push_back(count == 1 ? 0 : l * (extent - 1) / (count - 1));
    return lines;
  };
  for (std::int64_t i : spaced(s.m))
    for (std::int64_t j = 0; j < s.n; ++j) entries.emplace_back(i, j);
  for (std::int64_t j : spaced(s.n))
    for (std::int64_t i = 0; i < s.m; ++i) entries.emplace_back(i, j);
  return entries;
}

// Runs SFC-CA (blocked entry: pack, execute, unpack, the path the timing used
// plus packing; plain entries: plan.gemm with the call) and every peer on the
// first plain input set and the same initial C, and compares each with an
// fp64 reference of the same call: returns the largest error over the
// tolerance, a summation-order bound 16 K u max(1, |C_ref|) that real
// results meet by orders of magnitude and wrong ones (a missing or doubled K
// block, a transpose ignored) miss by as much, and whose it is.
std::pair<double, std::size_t> verify(GemmPlan& plan, const ColdOperands& plain,
                                      const std::vector<std::unique_ptr<GemmPeer>>& peers, DType dtype,
                                      bool blocked_entry) {
  const GemmShape& s = plan.shape();
  const GemmArguments& call = plain.arguments();
  const Layout layout = plain.layout();
  const std::size_t out = output_size(dtype);
  const std::size_t count = std::size_t(s.m * s.n);
  const std::int64_t ldc = layout == Layout::row_major ? s.n : s.m;  // tight
  AlignedBuffer initial(count * out);
  fill_uniform(initial.data(), count, dtype == DType::f64 ? DType::f64 : DType::f32, 4242);

  // The reference at the checked entries, from the same inputs and initial C.
  const bool ta = call.trans_a == Transpose::transpose, tb = call.trans_b == Transpose::transpose;
  const std::vector<std::pair<std::int64_t, std::int64_t>> entries = checked_entries(s);
  std::vector<double> reference;
  reference.reserve(entries.size());
  double largest = 1;
  for (const auto& [i, j] : entries) {
    double sum = 0;
    for (std::int64_t p = 0; p < s.k; ++p)
      sum += input_element(plain.a(0), dtype,
                           ta ? offset(layout, p, i, plain.lda()) : offset(layout, i, p, plain.lda())) *
             input_element(plain.b(0), dtype,
                           tb ? offset(layout, j, p, plain.ldb()) : offset(layout, p, j, plain.ldb()));
    const std::size_t at = offset(layout, i, j, ldc);
    reference.push_back(call.alpha * sum +
                        (call.beta == 0 ? 0.0 : call.beta * output_element(initial.data(), dtype, at)));
    largest = std::max(largest, std::abs(reference.back()));
  }
  const double tolerance = 16.0 * double(s.k) * unit_roundoff(dtype) * largest;

  // Each implementation in turn (0: SFC-CA, then the peers), on one C buffer
  // that starts from `initial` every time.
  AlignedBuffer result(count * out);
  std::pair<double, std::size_t> worst{0.0, 0};
  for (std::size_t r = 0; r <= peers.size(); ++r) {
    std::memcpy(result.data(), initial.data(), count * out);
    if (r > 0) {
      peers[r - 1]->gemm(dtype, layout, call, s, plain.a(0), plain.lda(), plain.b(0), plain.ldb(),
                         result.data(), ldc);
    } else if (blocked_entry) {
      const std::size_t in = input_size(dtype);
      AlignedBuffer a(plan.a_elements() * in), b(plan.b_elements() * in), c(plan.c_elements() * out);
      plan.pack_a(layout, plain.a(0), plain.lda(), a.data());
      plan.pack_b(layout, plain.b(0), plain.ldb(), b.data());
      plan.execute(a.data(), b.data(), c.data());
      plan.unpack_c(c.data(), layout, result.data(), ldc);
    } else {
      plan.gemm(layout, call.trans_a, call.trans_b, call.alpha, plain.a(0), plain.lda(), plain.b(0),
                plain.ldb(), call.beta, result.data(), ldc);
    }
    double difference = 0;
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const auto [i, j] = entries[e];
      // NaN compares false: count it as an infinite difference.
      const double d =
          std::abs(output_element(result.data(), dtype, offset(layout, i, j, ldc)) - reference[e]);
      difference = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(difference, d);
    }
    if (difference / tolerance > worst.first) worst = {difference / tolerance, r};
  }
  return worst;
}

ShapeMeasurement measure_shape(const GemmShape& shape, const BenchOptions& options, const Knobs& config,
                               const std::vector<std::unique_ptr<GemmPeer>>& peers,
                               const Roofline& roofline) {
  ColdOperands::check_fits(shape, options.dtype);  // before planning what cannot run
  GemmPlan plan(plan_request(shape, options, config));
  ShapeMeasurement m;
  m.shape = shape;
  m.config = {plan.k_layers(), plan.k_block_factor()};
  m.roofline_gflops = roofline.bound_gflops(shape, options.dtype);
  const int reps = bench_reps(shape, options, m.roofline_gflops);
  const int runs = options.warmup + reps;
  // Blocked sets only when SFC-CA runs blocked; plain ones (row-major, or
  // column-major for that entry) for the peers, the plain entries and the check.
  std::optional<ColdOperands> blocked;
  if (options.layout == Layout::blocked) blocked.emplace(plan, Layout::blocked, runs);
  std::optional<ColdOperands> plain;
  const Layout plain_layout = options.layout == Layout::col_major ? Layout::col_major : Layout::row_major;
  if (options.layout != Layout::blocked || !peers.empty())
    plain.emplace(plan, plain_layout, runs, 42, options.call);
  // Each variant's operands are stored as its call reads them (a transposed
  // operand transposed), one set of inputs each.
  std::vector<ColdOperands> variants;
  variants.reserve(options.variants.size());
  for (const GemmArguments& call : options.variants)
    variants.emplace_back(plan, plain_layout, runs, 42, call);

  const std::size_t first_peer = 1 + variants.size();
  m.timings.assign(first_peer + peers.size(), Timing{});
  m.passes.assign(std::size_t(options.passes), std::vector<Timing>(m.timings.size()));
  for (std::vector<Timing>& pass : m.passes) {
    std::this_thread::sleep_for(kSettleTime);
    pass[0] = (blocked ? *blocked : *plain).time(plan, options.warmup, reps);
    for (std::size_t i = 0; i < variants.size(); ++i) {
      std::this_thread::sleep_for(kSettleTime);
      pass[1 + i] = variants[i].time(plan, options.warmup, reps);
    }
    for (std::size_t i = 0; i < peers.size(); ++i) {
      std::this_thread::sleep_for(kSettleTime);
      pass[first_peer + i] = time_peer(*peers[i], *plain, shape, options, reps);
    }
    for (std::size_t i = 0; i < pass.size(); ++i) m.timings[i] = pooled(m.timings[i], pass[i]);
  }
  if (plain) {
    const auto [ratio, index] = verify(plan, *plain, peers, options.dtype, options.layout == Layout::blocked);
    m.max_error_ratio = ratio;
    // verify's order is SFC-CA, then the peers; the variants sit between them in the result.
    m.worst_implementation = index == 0 ? 0 : first_peer + index - 1;
  }
  return m;
}

}  // namespace

std::string variant_name(const GemmArguments& variant, const GemmArguments& reference) {
  std::string name = std::string(kSfcImplementation) + ":";
  name += variant.trans_a == Transpose::none ? 'N' : 'T';
  name += variant.trans_b == Transpose::none ? 'N' : 'T';
  if (variant.alpha != reference.alpha) name += fmt::format(":alpha={}", variant.alpha);
  if (variant.beta != reference.beta) name += fmt::format(":beta={}", variant.beta);
  return name;
}

int bench_reps(const GemmShape& shape, const BenchOptions& options, double roofline_gflops) {
  if (options.min_seconds <= 0 || roofline_gflops <= 0) return options.reps;
  const double fastest_run = shape.flops() / (roofline_gflops * 1e9);
  const double wanted = std::ceil(options.min_seconds / fastest_run);
  return std::max(options.reps, int(std::min(wanted, double(kMaxBenchReps))));
}

BenchResult run_bench(const std::vector<GemmShape>& shapes, const BenchOptions& options,
                      const ConfigPicker& picker, std::vector<std::unique_ptr<GemmPeer>> peers,
                      const Roofline& roofline) {
  if (shapes.empty()) throw Error("the benchmark needs at least one shape");
  if (options.reps < 1) throw Error("repetitions must be >= 1, got " + std::to_string(options.reps));
  if (options.passes < 1) throw Error("passes must be >= 1, got " + std::to_string(options.passes));
  if (!(options.min_seconds >= 0 && options.min_seconds <= 60))
    throw Error("minimum seconds per pass must be in [0, 60], got " + std::to_string(options.min_seconds));
  if (options.warmup < 0) throw Error("warm-up runs must be >= 0, got " + std::to_string(options.warmup));
  if (options.threads < 1) throw Error("threads must be >= 1, got " + std::to_string(options.threads));

  if (options.layout == Layout::blocked && (!options.call.plain_product() || !options.variants.empty()))
    throw Error("transposes, alpha and beta need --layout row or col");

  BenchResult result;
  result.statistic = options.statistic;
  result.implementations.emplace_back(kSfcImplementation);
  result.in_peer_ratio.push_back(false);
  for (const GemmArguments& variant : options.variants) {
    result.implementations.push_back(variant_name(variant, options.call));
    result.in_peer_ratio.push_back(false);
  }
  std::vector<std::unique_ptr<GemmPeer>> usable;
  for (auto& peer : peers) {
    if (!peer->supports(options.dtype)) {
      result.notes.push_back(std::string(peer->name()) + " skipped: it has no " +
                             std::string(to_string(options.dtype)) + " GEMM");
      continue;
    }
    peer->set_threads(options.threads);
    result.implementations.emplace_back(peer->name());
    const std::string left_out = options.count_every_peer ? std::string() : peer->not_a_contender();
    result.in_peer_ratio.push_back(left_out.empty());
    if (!left_out.empty()) {
      result.notes.push_back(left_out + " (--count-every-peer counts it)");
      spdlog::info("{}", result.notes.back());
    }
    usable.push_back(std::move(peer));
  }

  if (options.warmup == 0) {
    result.notes.push_back(
        "--warmup 0: each implementation's first timed run of a shape includes its one-time work (oneDNN "
        "generates a kernel per shape on its first call; thread pools start), so figures and ratios may "
        "mislead; use --warmup 1 or more");
    spdlog::warn("{}", result.notes.back());
  }
  const double start = wall_seconds();
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (options.stop && options.stop->load()) {
      result.interrupted = true;
      result.notes.push_back(
          fmt::format("interrupted after {} of {} shapes: the figures cover those", s, shapes.size()));
      spdlog::warn("{}", result.notes.back());
      break;
    }
    const GemmShape& shape = shapes[s];
    const Knobs config = picker(shape);
    ShapeMeasurement m = measure_shape(shape, options, config, usable, roofline);
    std::string line = fmt::format("[{}/{}] ", s + 1, shapes.size()) + to_string(shape) + " (" +
                       std::to_string(m.config.k_layers) + "," + std::to_string(m.config.k_block_factor) +
                       "):";
    for (std::size_t i = 0; i < m.timings.size(); ++i)
      line += fmt::format(" {} {:.1f}", result.implementations[i],
                          gflops(shape, m.timings[i], options.statistic));
    // The time left, from the mean so far (shapes differ, so it is a guide).
    const std::size_t left = shapes.size() - s - 1;
    const double eta = (wall_seconds() - start) / double(s + 1) * double(left);
    spdlog::info("{} GFLOP/s{}", line, left ? fmt::format(", about {:.0f} s left", eta) : std::string());
    if (m.max_error_ratio > 1) {
      result.notes.push_back(result.implementations[m.worst_implementation] + "'s result for " +
                             to_string(shape) + " differs from the fp64 reference beyond rounding (" +
                             fmt::format("{:.3g}", m.max_error_ratio) + "x the tolerance)");
      spdlog::error("{}", result.notes.back());
    }
    result.shapes.push_back(std::move(m));
  }
  return result;
}

ConfigPicker quick_search_picker(const BenchOptions& options) {
  const Tuner tuner({.dtype = options.dtype,
                     .threads = options.threads,
                     .warmup = kSearchWarmup,
                     .reps = kSearchReps,
                     .prune_margin = kSearchPruneMargin,
                     .layout = options.layout});
  const ConfigSet configs = ConfigSet::parse(kSearchKnobs, kSearchKnobs);
  return [tuner, configs](const GemmShape& shape) {
    const TunedShape winner = tuner.tune(shape, configs).result;
    spdlog::debug("quick search {}: best ({},{})", to_string(shape), winner.k_layers, winner.k_block_factor);
    return Knobs{winner.k_layers, winner.k_block_factor};
  };
}

}  // namespace sfc
