// Drawing the speedup-bounds plot (speedup_plot_svg.h). Plain SVG 1.1 with its
// style inline: no script, no external font or stylesheet, so it opens anywhere.
#include "speedup_plot_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cilkprof::cli {
namespace {

constexpr double kWidth = 720, kHeight = 460;
constexpr double kLeft = 70, kRight = 190, kTop = 50, kBottom = 60;  // margins; the legend sits right

std::string Escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Num(double value, int decimals = 2) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

std::string RenderSpeedupSvg(const SpeedupPlot& plot) {
  const auto& table = plot.figures.speedup;
  // The x range: P up to where the bounds have flattened (twice the parallelism) and
  // every measured worker count, at least 8, within the table's P.
  uint32_t wanted = 8;
  for (const MeasuredSpeedup& m : plot.measured) wanted = std::max(wanted, m.workers);
  wanted = std::max(wanted, static_cast<uint32_t>(std::min(2 * plot.figures.parallelism, 1e9)));
  std::vector<views::WorkSpanFigures::Speedup> shown;
  for (const auto& s : table) {
    shown.push_back(s);
    if (s.p >= wanted) break;
  }
  const double p_max = shown.empty() ? 1 : std::max<double>(2, shown.back().p);
  // y: log2 too (a log-log plot, where the bound P is the diagonal), from the power of
  // two at or below every value to the one at or above.
  double y_low = 1, y_high = 2;
  auto cover = [&](double v) {
    if (v <= 0) return;
    y_low = std::min(y_low, std::exp2(std::floor(std::log2(v))));
    y_high = std::max(y_high, std::exp2(std::ceil(std::log2(v))));
  };
  for (const auto& s : shown) {
    cover(s.upper);
    cover(s.lower);
  }
  for (const MeasuredSpeedup& m : plot.measured) {
    if (m.workers <= p_max) cover(m.speedup);
  }

  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](double p) { return kLeft + plot_w * std::log2(std::max(p, 1.0)) / std::log2(p_max); };
  auto y_of = [&](double s) {
    return kTop + plot_h * (1 - std::log2(std::max(s, y_low) / y_low) / std::log2(y_high / y_low));
  };

  std::string svg;
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + Num(kWidth, 0) + "\" height=\"" +
         Num(kHeight, 0) + "\" viewBox=\"0 0 " + Num(kWidth, 0) + " " + Num(kHeight, 0) + "\">\n";
  svg += "<title>Speedup bounds: " + Escape(plot.title) + "</title>\n";
  svg +=
      "<style>text{font-family:sans-serif;font-size:12px;fill:#222}.axis{stroke:#222;stroke-width:1}"
      ".grid{stroke:#ddd;stroke-width:1}.bound{fill:none;stroke-width:2}.upper{stroke:#1f77b4}"
      ".lower{stroke:#d62728;stroke-dasharray:6 4}.measured{fill:#2ca02c;stroke:#111;stroke-width:1}"
      ".title{font-size:15px;font-weight:bold}</style>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  svg += "<text class=\"title\" x=\"" + Num(kLeft, 0) + "\" y=\"28\">Speedup of " + Escape(plot.title) +
         ": parallelism " + Num(plot.figures.parallelism) + ", burdened " + Num(plot.figures.burdened_parallelism) +
         "</text>\n";

  // Grid and ticks at every power of two.
  svg += "<g id=\"axes\">\n";
  for (double p = 1; p <= p_max; p *= 2) {
    const std::string x = Num(x_of(p), 1);
    svg += "<line class=\"grid\" x1=\"" + x + "\" y1=\"" + Num(kTop, 0) + "\" x2=\"" + x + "\" y2=\"" +
           Num(kTop + plot_h, 0) + "\"/>";
    svg += "<text x=\"" + x + "\" y=\"" + Num(kTop + plot_h + 18, 0) + "\" text-anchor=\"middle\">" + Num(p, 0) +
           "</text>\n";
  }
  for (double s = y_low; s <= y_high; s *= 2) {
    const std::string y = Num(y_of(s), 1);
    svg += "<line class=\"grid\" x1=\"" + Num(kLeft, 0) + "\" y1=\"" + y + "\" x2=\"" + Num(kLeft + plot_w, 0) +
           "\" y2=\"" + y + "\"/>";
    svg += "<text x=\"" + Num(kLeft - 8, 0) + "\" y=\"" + Num(y_of(s) + 4, 1) + "\" text-anchor=\"end\">" +
           Num(s, s < 1 ? 2 : 0) + "</text>\n";
  }
  svg += "<line class=\"axis\" x1=\"" + Num(kLeft, 0) + "\" y1=\"" + Num(kTop + plot_h, 0) + "\" x2=\"" +
         Num(kLeft + plot_w, 0) + "\" y2=\"" + Num(kTop + plot_h, 0) + "\"/>\n";
  svg += "<line class=\"axis\" x1=\"" + Num(kLeft, 0) + "\" y1=\"" + Num(kTop, 0) + "\" x2=\"" + Num(kLeft, 0) +
         "\" y2=\"" + Num(kTop + plot_h, 0) + "\"/>\n";
  svg += "<text x=\"" + Num(kLeft + plot_w / 2, 0) + "\" y=\"" + Num(kHeight - 18, 0) +
         "\" text-anchor=\"middle\">processors P (log2 scale)</text>\n";
  svg += "<text transform=\"translate(20 " + Num(kTop + plot_h / 2, 0) +
         ") rotate(-90)\" text-anchor=\"middle\">speedup (log2 scale)</text>\n";
  svg += "</g>\n";

  auto polyline = [&](const char* id, const char* cls, bool upper) {
    std::string points;
    for (const auto& s : shown) {
      points += (points.empty() ? "" : " ") + Num(x_of(s.p), 1) + "," + Num(y_of(upper ? s.upper : s.lower), 1);
    }
    return std::string("<polyline id=\"") + id + "\" class=\"bound " + cls + "\" points=\"" + points + "\"/>\n";
  };
  svg += polyline("upper-bound", "upper", true);
  svg += polyline("lower-bound", "lower", false);

  svg += "<g id=\"measured\">\n";
  for (const MeasuredSpeedup& m : plot.measured) {
    if (m.workers == 0 || m.workers > p_max) continue;
    svg += "<circle class=\"measured\" data-workers=\"" + std::to_string(m.workers) + "\" data-speedup=\"" +
           Num(m.speedup, 4) + "\" cx=\"" + Num(x_of(m.workers), 1) + "\" cy=\"" + Num(y_of(m.speedup), 1) +
           "\" r=\"5\"><title>" + std::to_string(m.workers) + " workers: speedup " + Num(m.speedup, 2) + " (" +
           Escape(m.source) + ")</title></circle>\n";
  }
  svg += "</g>\n";

  // Legend, right of the plot.
  const double lx = kLeft + plot_w + 20;
  svg += "<g id=\"legend\">\n";
  svg += "<line class=\"bound upper\" x1=\"" + Num(lx, 0) + "\" y1=\"" + Num(kTop + 10, 0) + "\" x2=\"" +
         Num(lx + 24, 0) + "\" y2=\"" + Num(kTop + 10, 0) + "\"/><text x=\"" + Num(lx + 30, 0) + "\" y=\"" +
         Num(kTop + 14, 0) + "\">upper: min(P, parallelism)</text>\n";
  svg += "<line class=\"bound lower\" x1=\"" + Num(lx, 0) + "\" y1=\"" + Num(kTop + 32, 0) + "\" x2=\"" +
         Num(lx + 24, 0) + "\" y2=\"" + Num(kTop + 32, 0) + "\"/><text x=\"" + Num(lx + 30, 0) + "\" y=\"" +
         Num(kTop + 36, 0) + "\">lower: burdened span</text>\n";
  if (!plot.measured.empty()) {
    svg += "<circle class=\"measured\" cx=\"" + Num(lx + 12, 0) + "\" cy=\"" + Num(kTop + 54, 0) +
           "\" r=\"5\"/><text x=\"" + Num(lx + 30, 0) + "\" y=\"" + Num(kTop + 58, 0) + "\">measured</text>\n";
    if (!plot.measured_note.empty()) {
      svg += "<text x=\"8\" y=\"" + Num(kHeight - 4, 0) + "\" style=\"font-size:10px\">" +
             Escape(plot.measured_note) + "</text>\n";
    }
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace cilkprof::cli
