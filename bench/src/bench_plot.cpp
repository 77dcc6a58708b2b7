// The SVG plot: GFLOP/s per shape, shapes sorted by arithmetic intensity on x,
// one polyline with markers per implementation and the roofline dashed, like
// the paper's figures 5 and 8. Plain SVG 1.1 that any browser shows.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sfc/bench_report.hpp"
#include "sfc/bench_summary.hpp"

namespace sfc {
namespace {

// Canvas and plot area, in pixels.
constexpr double kWidth = 1000, kHeight = 560;
constexpr double kLeft = 70, kRight = 170, kTop = 50, kBottom = 130;
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

void write_series(std::ostream& out, const Axes& axes, const std::string& name, const std::string& colour,
                  const std::vector<double>& values, bool dashed) {
  out << fmt::format("<g class=\"series\" id=\"series-{}\" stroke=\"{}\" fill=\"{}\">\n", escape(name),
                     colour, colour);
  std::string points;
  for (std::size_t i = 0; i < values.size(); ++i)
    points += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", axes.x(i), axes.y(values[i]));
  out << fmt::format("<polyline fill=\"none\" stroke-width=\"{}\"{} points=\"{}\"/>\n", dashed ? 1.5 : 2,
                     dashed ? " stroke-dasharray=\"6,4\"" : "", points);
  if (!dashed)
    for (std::size_t i = 0; i < values.size(); ++i)
      out << fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{} {:.1f} GFLOP/s</title></circle>\n",
          axes.x(i), axes.y(values[i]), escape(name), values[i]);
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
  double highest = 1;
  for (std::size_t s : order) {
    for (std::size_t i = 0; i < series.size(); ++i) {
      series[i].push_back(gflops(shapes[s].shape, shapes[s].timings.at(i), result.statistic));
      highest = std::max(highest, series[i].back());
    }
    roofline.push_back(shapes[s].roofline_gflops);
    highest = std::max(highest, roofline.back());
  }
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
  out << fmt::format("<text x=\"{}\" y=\"38\" fill=\"#555\">{}</text>\n", kLeft, escape(context.platform));

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

  // X axis: one tick per shape, labelled with the shape and its intensity.
  out << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", kLeft,
                     kTop + kPlotHeight, kLeft + kPlotWidth, kTop + kPlotHeight);
  out << "<g class=\"shapes\" font-size=\"9\">\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const GemmShape& shape = shapes[order[i]].shape;
    out << fmt::format(
        "<text transform=\"translate({:.1f},{}) rotate(-60)\" text-anchor=\"end\">"
        "{} ({:.0f})</text>\n",
        axes.x(i) + 3, kTop + kPlotHeight + 8, to_string(shape), arithmetic_intensity(shape, context.dtype));
  }
  out << "</g>\n";
  out << fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">shape MxNxK "
      "(arithmetic intensity, flop/byte), sorted by intensity</text>\n",
      kLeft + kPlotWidth / 2, kHeight - 8);

  write_series(out, axes, "roofline", "black", roofline, true);
  for (std::size_t i = 0; i < series.size(); ++i)
    write_series(out, axes, result.implementations[i], kColours[i % std::size(kColours)], series[i], false);

  // Legend, right of the plot.
  out << "<g class=\"legend\">\n";
  const double legend_x = kLeft + kPlotWidth + 20;
  for (std::size_t i = 0; i <= series.size(); ++i) {
    const bool is_roofline = i == series.size();
    const std::string name = is_roofline ? "roofline" : result.implementations[i];
    const std::string colour = is_roofline ? "black" : kColours[i % std::size(kColours)];
    const double y = kTop + 10 + 20 * double(i);
    out << fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/><text x=\"{}\" y=\"{}\">{}</text>\n",
        legend_x, y, legend_x + 24, y, colour, is_roofline ? " stroke-dasharray=\"6,4\"" : "", legend_x + 30,
        y + 4, escape(name));
  }
  out << "</g>\n</svg>\n";
}

}  // namespace sfc
