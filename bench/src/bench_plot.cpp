// The SVG plot: GFLOP/s per shape, shapes sorted by arithmetic intensity on x,
// one marker per shape and implementation and a short black bar for the
// shape's roofline, never a line joining shapes (separate shapes are not a
// trend), and the FMA peak dotted across (unless it was measured low); the legend carries each
// implementation's WHM and SFC-CA's ratio to it, the header the libraries and
// the date, and noisy shapes are marked. Plain SVG 1.1 that any browser (and
// rsvg-convert, in the tests) renders.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sfc/bench_report.hpp"
#include "sfc/bench_summary.hpp"
#include "sfc/records.hpp"

namespace sfc {
namespace {

// Canvas and plot area, in pixels.
constexpr double kWidth = 1000, kHeight = 600;
constexpr double kLeft = 70, kRight = 230, kTop = 90, kBottom = 130;
// At most this many shape labels on the x axis: beyond it, every k-th.
constexpr std::size_t kMaxLabels = 24;
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;

// SFC-CA first, then the peers; the roofline is drawn in black, dashed.
constexpr const char* kColours[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

std::string escape(std::string_view text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// A round tick step (1, 2 or 5 times a power of ten) giving about 6 ticks up to `top`.
double tick_step(double top) {
  const double raw = top / 6;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

struct Axes {
  std::size_t points;
  double y_top;
  double x(std::size_t i) const {
    return kLeft + (points == 1 ? kPlotWidth / 2 : kPlotWidth * double(i) / double(points - 1));
  }
  double y(double value) const { return kTop + kPlotHeight * (1 - value / y_top); }
};

// One implementation's (or the roofline's) value per shape: a marker each,
// or for the roofline a short horizontal bar each; nothing joins shapes.
void write_series(std::ostream& out, const Axes& axes, const std::string& name, const std::string& colour,
                  const std::vector<double>& values, bool roofline) {
  out << fmt::format("<g class=\"series\" id=\"series-{}\" stroke=\"{}\" fill=\"{}\">\n", escape(name),
                     colour, colour);
  const double half_bar = std::min(8.0, kPlotWidth / double(2 * std::max<std::size_t>(axes.points, 1)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (roofline)
      out << fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke-width=\"2\">"
          "<title>{} {:.1f} GFLOP/s</title></line>\n",
          axes.x(i) - half_bar, axes.y(values[i]), axes.x(i) + half_bar, axes.y(values[i]), escape(name),
          values[i]);
    else
      out << fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\"><title>{} {:.1f} GFLOP/s</title></circle>\n",
          axes.x(i), axes.y(values[i]), escape(name), values[i]);
  }
  out << "</g>\n";
}

}  // namespace

void write_svg(std::ostream& out, const BenchContext& context, const BenchResult& result) {
  const auto& shapes = result.shapes;
  std::vector<std::size_t> order(shapes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return arithmetic_intensity(shapes[a].shape, context.dtype) <
           arithmetic_intensity(shapes[b].shape, context.dtype);
  });

  // One series per implementation, plus the roofline, in x order.
  std::vector<std::vector<double>> series(result.implementations.size());
  std::vector<double> roofline;
  std::vector<bool> starred;  // noisy shapes, in x order
  const bool show_peak = context.peak_gflops > 0 && !context.peak_measured_low;
  double highest = std::max(1.0, show_peak ? context.peak_gflops : 0.0);
  for (std::size_t s : order) {
    for (std::size_t i = 0; i < series.size(); ++i) {
      series[i].push_back(gflops(shapes[s].shape, shapes[s].timings.at(i), result.statistic));
      highest = std::max(highest, series[i].back());
    }
    starred.push_back(noisy(shapes[s]));
    roofline.push_back(shapes[s].roofline_gflops);
    highest = std::max(highest, roofline.back());
  }
  const BenchSummary summary = summarize(result);
  const double step = tick_step(highest);
  const Axes axes{std::max<std::size_t>(order.size(), 1), std::ceil(highest / step) * step};

  out << fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, kHeight);
  out << fmt::format("<title>{}</title>\n", escape(context.command_line));
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << fmt::format(
      "<text x=\"{}\" y=\"22\" font-size=\"14\">{} GEMM, {} threads, SFC-CA {} "
      "entry, configuration {}</text>\n",
      kLeft, to_string(context.dtype), context.threads, to_string(context.layout),
      escape(context.config_source));
  out << fmt::format("<text x=\"{}\" y=\"38\" fill=\"#555\">{}, {}</text>\n", kLeft, escape(context.platform),
                     utc_timestamp().substr(0, 10));
  // The libraries, one line each (the report has them whole).
  for (std::size_t i = 0; i < context.libraries.size() && i < 3; ++i)
    out << fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\" font-size=\"9\">{}</text>\n", kLeft,
                       52 + 11 * double(i), escape(context.libraries[i].substr(0, 150)));

  // Y axis: grid lines and labels at round values.
  out << "<g class=\"axis\" stroke=\"#ccc\">\n";
  for (double v = 0; v <= axes.y_top + step / 2; v += step)
    out << fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" stroke=\"none\" "
        "fill=\"black\">{:g}</text>\n",
        kLeft, axes.y(v), kLeft + kPlotWidth, axes.y(v), kLeft - 6, axes.y(v) + 4, v);
  out << "</g>\n";
  out << fmt::format(
      "<text transform=\"translate(18,{:.1f}) rotate(-90)\" text-anchor=\"middle\">"
      "GFLOP/s</text>\n",
      kTop + kPlotHeight / 2);

  // X axis: a tick per shape; labels (shape and intensity) on every k-th, so
  // that 64 shapes stay readable; noisy shapes in orange with a star.
  const std::size_t every = (order.size() + kMaxLabels - 1) / kMaxLabels;
  out << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", kLeft,
                     kTop + kPlotHeight, kLeft + kPlotWidth, kTop + kPlotHeight);
  out << "<g class=\"shapes\" font-size=\"9\">\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const GemmShape& shape = shapes[order[i]].shape;
    out << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\"/>\n",
                       axes.x(i), kTop + kPlotHeight, kTop + kPlotHeight + 4,
                       starred[i] ? "#e6550d" : "black");
    if (i % every && !starred[i]) continue;
    out << fmt::format(
        "<text transform=\"translate({:.1f},{}) rotate(-60)\" text-anchor=\"end\"{}>"
        "{}{} ({:.0f})</text>\n",
        axes.x(i) + 3, kTop + kPlotHeight + 8, starred[i] ? " fill=\"#e6550d\"" : "", starred[i] ? "* " : "",
        to_string(shape), arithmetic_intensity(shape, context.dtype));
  }
  out << "</g>\n";
  out << fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">shape MxNxK "
      "(arithmetic intensity, flop/byte), sorted by intensity{}; * noisy: runs spread over {:.0f}%</text>\n",
      kLeft + kPlotWidth / 2, kHeight - 8,
      every > 1 ? fmt::format(", 1 in {} labelled (the CSV has all)", every) : std::string(),
      kNoisyVariation * 100);

  // The FMA (or tile) peak: what any implementation could reach at most; a
  // peak some GEMM beat was measured low and is left out (the report says so).
  if (show_peak)
    out << fmt::format(
        "<g class=\"fma-peak\"><line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#777\" "
        "stroke-dasharray=\"2,3\"/><text x=\"{2}\" y=\"{3:.1f}\" text-anchor=\"end\" fill=\"#555\">"
        "{5} {4:.0f} GFLOP/s</text></g>\n",
        kLeft, axes.y(context.peak_gflops), kLeft + kPlotWidth, axes.y(context.peak_gflops) - 4,
        context.peak_gflops, context.peak_name());
  else if (context.peak_measured_low)
    out << fmt::format(
        "<text class=\"fma-peak-low\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#555\">{}</text>\n",
        kLeft + kPlotWidth, kTop - 6, escape(peak_measured_low_note(context)));
  write_series(out, axes, "roofline", "black", roofline, true);
  for (std::size_t i = 0; i < series.size(); ++i)
    write_series(out, axes, result.implementations[i], kColours[i % std::size(kColours)], series[i], false);

  // Legend, right of the plot.
  out << "<g class=\"legend\">\n";
  const double legend_x = kLeft + kPlotWidth + 20;
  out << fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">WHM GFLOP/s (SFC-CA over it)</text>\n", legend_x,
                     kTop - 6);
  for (std::size_t i = 0; i <= series.size(); ++i) {
    const bool is_roofline = i == series.size();
    const std::string name =
        is_roofline ? "roofline"
                    : fmt::format("{} {:.1f}{}", result.implementations[i], summary.whm_gflops.at(i),
                                  i == 0 ? std::string() : fmt::format(" ({:.2f}x)", summary.ratio_vs.at(i)));
    const std::string colour = is_roofline ? "black" : kColours[i % std::size(kColours)];
    const double y = kTop + 10 + 20 * double(i);
    if (is_roofline)
      out << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"/>",
                         legend_x + 4, y, legend_x + 20, y, colour);
    else
      out << fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>", legend_x + 12, y, colour);
    out << fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", legend_x + 30, y + 4, escape(name));
  }
  out << "</g>\n</svg>\n";
}

}  // namespace sfc
