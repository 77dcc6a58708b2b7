// The table, CSV and JSON writers (the SVG plot is in bench_plot.cpp).
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "sfc/bench_report.hpp"

namespace sfc {
namespace {

std::string ratio_text(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.2f}", *ratio) : "-";
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Column widths of the table.
constexpr int kShapeWidth = 16, kNumberWidth = 10, kConfigWidth = 8;

}  // namespace

std::string peak_measured_low_note(const BenchContext& context) {
  return "the " + context.peak_name() + " was measured low (busy machine?): ratios to it are not shown";
}

bool noisy(const ShapeMeasurement& m) {
  return std::any_of(m.timings.begin(), m.timings.end(),
                     [](const Timing& t) { return t.stddev > kNoisyVariation * t.mean; });
}

void write_table(std::ostream& out, const BenchContext& context, const BenchResult& result,
                 const BenchSummary& summary) {
  const auto& names = result.implementations;
  out << "# " << context.command_line << "\n";
  out << "# platform: " << context.platform << "\n";
  out << fmt::format("# {} GEMM, {} threads; SFC-CA {} entry{}, configuration: {}\n",
                     to_string(context.dtype), context.threads, to_string(context.layout),
                     context.layout == Layout::blocked ? "" : " (packing included)", context.config_source);
  for (const std::string& library : context.libraries) out << "# peer: " << library << "\n";
  out << fmt::format("# roofline: min({:.1f} GFLOP/s/core x {} threads, {:.1f} GB/s x flop/byte), {}\n",
                     context.roofline.gflops_per_core, context.roofline.threads,
                     context.roofline.bandwidth_gbs, context.roofline.source);
  if (context.peak_gflops > 0)
    out << fmt::format("# {}: {:.1f} GFLOP/s on {} threads ({} on registers only, best of short runs {})\n",
                       context.peak_name(), context.peak_gflops, context.threads,
                       context.peak_on_tiles ? "bf16 tile products" : "FMAs",
                       context.peak_remeasured ? "at the start and again after the shapes" : "at the start");
  if (context.peak_measured_low) out << "# note: " << peak_measured_low_note(context) << "\n";
  for (const std::string& variable : context.environment) out << "# environment: " << variable << "\n";
  if (!context.machine_load.empty()) out << "# machine: " << context.machine_load << "\n";
  out << fmt::format("# GFLOP/s = 2MNK / {} of cold-input runs; WHM = sum of flops / sum of times\n",
                     result.statistic == Statistic::min ? "fastest" : "mean time");
  for (const std::string& note : result.notes) out << "# note: " << note << "\n";
  out << "\n";

  out << fmt::format("{:<{}}{:>{}}{:>{}}", "shape", kShapeWidth, "flop/B", kNumberWidth, "roofline",
                     kNumberWidth);
  for (const std::string& name : names) out << fmt::format("{:>{}}", name, kNumberWidth);
  out << fmt::format("{:>{}}{:>{}}\n", "KL,KBF", kConfigWidth, "vs best", kNumberWidth);
  int noisy_shapes = 0;
  for (std::size_t s = 0; s < result.shapes.size(); ++s) {
    const ShapeMeasurement& m = result.shapes[s];
    noisy_shapes += noisy(m);
    out << fmt::format("{:<{}}{:>{}.1f}{:>{}.1f}", to_string(m.shape), kShapeWidth,
                       arithmetic_intensity(m.shape, context.dtype), kNumberWidth, m.roofline_gflops,
                       kNumberWidth);
    for (const Timing& t : m.timings)
      out << fmt::format("{:>{}.1f}", gflops(m.shape, t, result.statistic), kNumberWidth);
    out << fmt::format("{:>{}}{:>{}}{}\n", fmt::format("{},{}", m.config.k_layers, m.config.k_block_factor),
                       kConfigWidth, ratio_text(summary.shape_ratio_vs_best_peer[s]), kNumberWidth,
                       noisy(m) ? " *" : "");
  }
  if (noisy_shapes > 0)
    out << fmt::format(
        "* {} shape(s) with a timing whose standard deviation exceeds {:.0f}% of its mean: "
        "a run was slowed by something else\n",
        noisy_shapes, 100 * kNoisyVariation);

  const int label_width = kShapeWidth + 2 * kNumberWidth;
  out << fmt::format("{:<{}}", "WHM GFLOP/s", label_width);
  for (double whm : summary.whm_gflops) out << fmt::format("{:>{}.1f}", whm, kNumberWidth);
  out << "\n" << fmt::format("{:<{}}", "SFC-CA / implementation", label_width);
  for (double ratio : summary.ratio_vs) out << fmt::format("{:>{}.3f}", ratio, kNumberWidth);
  if (context.peak_gflops > 0 && !context.peak_measured_low) {
    out << "\n" << fmt::format("{:<{}}", "WHM / " + context.peak_name(), label_width);
    for (double whm : summary.whm_gflops)
      out << fmt::format("{:>{}.3f}", whm / context.peak_gflops, kNumberWidth);
  }
  out << "\n\n";
  if (summary.best_peer) {
    const auto worst =
        std::min_element(summary.shape_ratio_vs_best_peer.begin(), summary.shape_ratio_vs_best_peer.end());
    out << fmt::format("SFC-CA WHM / best peer ({}): {:.3f}", names[*summary.best_peer],
                       *summary.ratio_vs_best_peer);
    if (summary.pass_ratios_vs_best_peer.size() > 1)
      out << fmt::format(" (pass by pass: {:.3f})", fmt::join(summary.pass_ratios_vs_best_peer, ", "));
    out << "\n";
    out << fmt::format(
        "lowest per-shape ratio to the best peer: {:.3f} ({})\n", *summary.min_shape_ratio,
        to_string(result.shapes[std::size_t(worst - summary.shape_ratio_vs_best_peer.begin())].shape));
  } else {
    out << "no peer ran: nothing to compare SFC-CA with\n";
  }
}

void write_csv(std::ostream& out, const BenchResult& result, const BenchSummary& summary) {
  out << "m,n,k,k_layers,k_block_factor,roofline_gflops";
  for (const std::string& name : result.implementations)
    out << ',' << name << "_gflops," << name << "_min_s," << name << "_mean_s," << name << "_stddev_s";
  out << ",ratio_vs_best_peer,max_error_ratio\n";
  for (std::size_t s = 0; s < result.shapes.size(); ++s) {
    const ShapeMeasurement& m = result.shapes[s];
    out << fmt::format("{},{},{},{},{},{:.3f}", m.shape.m, m.shape.n, m.shape.k, m.config.k_layers,
                       m.config.k_block_factor, m.roofline_gflops);
    for (const Timing& t : m.timings)
      out << fmt::format(",{:.3f},{:.6e},{:.6e},{:.3e}", gflops(m.shape, t, result.statistic), t.min, t.mean,
                         t.stddev);
    const auto& ratio = summary.shape_ratio_vs_best_peer[s];
    out << ',' << (ratio ? fmt::format("{:.4f}", *ratio) : "") << ','
        << fmt::format("{:.3g}", m.max_error_ratio) << "\n";
  }
}

nlohmann::json to_json(const BenchContext& context, const BenchResult& result, const BenchSummary& summary) {
  const auto& names = result.implementations;
  nlohmann::json whm = nlohmann::json::object(), ratio_vs_peer = nlohmann::json::object();
  for (std::size_t i = 0; i < names.size(); ++i) {
    whm[names[i]] = summary.whm_gflops[i];
    if (i > 0) ratio_vs_peer[names[i]] = summary.ratio_vs[i];
  }
  nlohmann::json shapes = nlohmann::json::array();
  for (std::size_t s = 0; s < result.shapes.size(); ++s) {
    const ShapeMeasurement& m = result.shapes[s];
    nlohmann::json rate = nlohmann::json::object(), fastest = nlohmann::json::object(),
                   mean = nlohmann::json::object(), stddev = nlohmann::json::object();
    for (std::size_t i = 0; i < names.size(); ++i) {
      rate[names[i]] = gflops(m.shape, m.timings[i], result.statistic);
      fastest[names[i]] = m.timings[i].min;
      mean[names[i]] = m.timings[i].mean;
      stddev[names[i]] = m.timings[i].stddev;
    }
    shapes.push_back({{"m", m.shape.m},
                      {"n", m.shape.n},
                      {"k", m.shape.k},
                      {"intensity", arithmetic_intensity(m.shape, context.dtype)},
                      {"roofline_gflops", m.roofline_gflops},
                      {"k_layers", m.config.k_layers},
                      {"k_block_factor", m.config.k_block_factor},
                      {"runs", m.timings.empty() ? 0 : m.timings[0].reps},  // per implementation, all passes
                      {"gflops", rate},
                      {"min_seconds", fastest},
                      {"mean_seconds", mean},
                      {"stddev_seconds", stddev},
                      {"ratio_vs_best_peer", optional_number(summary.shape_ratio_vs_best_peer[s])},
                      {"max_error_ratio", m.max_error_ratio}});
  }
  return {
      {"command", context.command_line},
      {"platform", context.platform},
      {"dtype", to_string(context.dtype)},
      {"statistic", to_string(result.statistic)},
      {"layout", to_string(context.layout)},
      {"threads", context.threads},
      {"config", context.config_source},
      {"libraries", context.libraries},
      {"roofline",
       {{"gflops_per_core", context.roofline.gflops_per_core},
        {"bandwidth_gbs", context.roofline.bandwidth_gbs},
        {"source", context.roofline.source}}},
      // The key predates tile peaks: the ceiling of peak_unit's kind.
      {"fma_peak_gflops",
       context.peak_gflops > 0 ? nlohmann::json(context.peak_gflops) : nlohmann::json(nullptr)},
      {"peak_unit", context.peak_on_tiles ? "amx" : "fma"},
      {"peak_measured_low", context.peak_measured_low},
      {"peak_remeasured", context.peak_remeasured},
      {"in_peer_ratio", result.in_peer_ratio},
      {"machine_load", context.machine_load},
      {"environment", context.environment},
      {"notes", result.notes},
      {"interrupted", result.interrupted},
      {"implementations", names},
      {"whm_gflops", whm},
      {"ratio_vs_peer", ratio_vs_peer},
      {"best_peer", summary.best_peer ? nlohmann::json(names[*summary.best_peer]) : nlohmann::json(nullptr)},
      {"ratio_vs_best_peer", optional_number(summary.ratio_vs_best_peer)},
      {"pass_ratios_vs_best_peer", summary.pass_ratios_vs_best_peer},
      {"min_shape_ratio", optional_number(summary.min_shape_ratio)},
      {"shapes", shapes}};
}

}  // namespace sfc
