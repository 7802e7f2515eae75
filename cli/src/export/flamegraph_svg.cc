// `--format svg` and `cilkprof flamegraph`: an interactive flame graph in one SVG file
// (docs/USER_GUIDE.md, "Flame graphs"). The frames are static SVG, so the picture shows
// in any SVG viewer; the embedded script (flamegraph/flamegraph.js) adds click-to-zoom,
// search and the details line in a browser. Which frames are drawn and where:
// flamegraph/layout.h.
//
// Structure (as flamegraph.pl's and inferno's, written anew): a header (title, the
// program and total, a colour legend, the zoom and search buttons), then a nested
// <svg id="frames"> whose children are one <g> per frame, in pre-order:
//   <g class="frame u s"><title>NAME\nwork: 1.234 ms (5.6%)...</title>
//     <rect x="1.5%" y="..." width="5.6%" height="15" fill="#..."/><text ...>NAME</text></g>
// x and width are percentages of the frames' area, so the script zooms by rescaling
// them; the first line of the title is the frame's name (what search matches).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/metric_columns.h"
#include "cilkprof/views/units.h"
#include "export/exporters.h"
#include "export/flamegraph/layout.h"
#include "export/flamegraph/resources.h"

namespace cilkprof::cli::exporters {
namespace {

using flamegraph::Frame;
using flamegraph::Layout;

// Geometry, in pixels. The frames' area is the image less a margin on each side.
constexpr double kImageWidth = 1200;
constexpr double kMargin = 10;
constexpr double kFramesWidth = kImageWidth - 2 * kMargin;
constexpr int kFrameHeight = 16;  // a 15-pixel rectangle and a 1-pixel gap
constexpr int kHeaderHeight = 72;
constexpr int kFooterHeight = 30;
constexpr double kCharWidth = 0.59 * 12;  // the 12-pixel font's average advance (as flamegraph.pl)

// Frames narrower than a tenth of a pixel of the whole graph are not drawn
// (flamegraph.pl's default --minwidth); at most this many frames are (about 250 bytes
// each: a file of a few megabytes that a browser renders in a second or two).
constexpr double kMinWidthPixels = 0.1;
constexpr size_t kMaxFrames = 30000;

// Appends text with XML's special characters escaped; bytes that are not valid UTF-8
// and control characters become '?', so a strange symbol name cannot break the file.
void AppendEscaped(std::string& out, std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!valid) {
      out += '?';
      ++i;
      continue;
    }
    if (length > 1) {
      out.append(text.substr(i, length));
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c == '\n') {
      out += '\n';
    } else if (c < 0x20 || c == 0x7F) {
      out += '?';
    } else {
      out += static_cast<char>(c);
    }
    i += length;
  }
}

// The longest prefix of `name` that fits `pixels`, ".." marking a cut; "" when not
// even three characters fit (the frame then has no text: the tooltip names it).
std::string FittedText(const std::string& name, double pixels) {
  const double room = (pixels - 6) / kCharWidth;
  if (room < 3) return "";
  if (name.size() <= room) return name;
  size_t cut = static_cast<size_t>(room) - 2;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return name.substr(0, cut) + "..";
}

// A percentage with up to six decimals and no trailing zeros ("12.5", "0.000123").
std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", 100.0 * fraction);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// What a frame's colour says: the program's own code, a library's, the profiler's
// markers, or a lock.
enum class Kind { kUser, kLibrary, kMarker, kLock };

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Kind KindOf(const Frame& frame, const std::string& executable) {
  switch (frame.kind) {
    case views::RowKind::kLock:
      return Kind::kLock;
    case views::RowKind::kContext:
      break;
    default:
      return Kind::kMarker;
  }
  const std::string& module = *frame.module;
  if (!module.empty() && (module == executable || Basename(module) == Basename(executable))) return Kind::kUser;
  return Kind::kLibrary;
}

const char* KindClass(Kind kind) {
  switch (kind) {
    case Kind::kUser:
      return "u";
    case Kind::kLibrary:
      return "l";
    case Kind::kMarker:
      return "m";
    case Kind::kLock:
      return "k";
  }
  return "u";
}

// "#rrggbb" from hue (degrees), saturation and lightness (0..1).
std::string Hsl(double hue, double saturation, double lightness) {
  const double c = (1 - std::fabs(2 * lightness - 1)) * saturation;
  const double h = std::fmod(hue, 360.0) / 60.0;
  const double x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (h < 1) {
    r = c, g = x;
  } else if (h < 2) {
    r = x, g = c;
  } else if (h < 3) {
    g = c, b = x;
  } else if (h < 4) {
    g = x, b = c;
  } else if (h < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  const double m = lightness - c / 2;
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", static_cast<int>(std::lround((r + m) * 255)),
                static_cast<int>(std::lround((g + m) * 255)), static_cast<int>(std::lround((b + m) * 255)));
  return buffer;
}

// The colour of a frame: its kind's family of hues, varied by a hash of the name so
// that neighbours differ and a function keeps its colour across graphs.
std::string ColorOf(Kind kind, const std::string& name) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  const double a = static_cast<double>(hash & 0xFFFF) / 0xFFFF;
  const double b = static_cast<double>((hash >> 16) & 0xFFFF) / 0xFFFF;
  switch (kind) {
    case Kind::kUser:
      return Hsl(8 + 44 * a, 0.85, 0.55 + 0.1 * b);  // red to yellow
    case Kind::kLibrary:
      return Hsl(175 + 40 * a, 0.5, 0.58 + 0.1 * b);  // aqua to blue
    case Kind::kMarker:
      return Hsl(0, 0, 0.72 + 0.08 * b);  // grey
    case Kind::kLock:
      return Hsl(270 + 25 * a, 0.45, 0.68 + 0.08 * b);  // violet
  }
  return "#cccccc";
}

// A frame's name as the views print it, without the "[spawn] " or "[task] " prefix:
// the outline marks a spawn or a task in the picture.
std::string FrameName(const Frame& frame) {
  views::RowView row;
  row.kind = frame.kind;
  row.name = frame.name;
  row.module = frame.module;
  row.inlined = frame.inlined;
  return views::RowLabel(row);
}

class SvgWriter {
 public:
  SvgWriter(const Layout& layout, const views::MetricInfo& metric, const ExportOptions& options,
            const profile::Profile& profile)
      : layout_(layout),
        metric_(metric),
        options_(options),
        executable_(profile.process().executable()),
        pid_(profile.process().pid()),
        value_scale_(views::ChooseScale(metric.unit, layout.total)) {
    // The views' unit for the total, with two more decimals: tooltips show small frames too.
    if (value_scale_.divisor > 1) value_scale_.decimals += 2;
  }

  std::string Write() {
    const int height = kHeaderHeight + static_cast<int>(layout_.max_depth + 1) * kFrameHeight + kFooterHeight;
    std::string& out = out_;
    out.reserve(layout_.frames.size() * 256 + 32768);
    out += "<?xml version=\"1.0\" standalone=\"no\"?>\n";
    out += "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Number(kImageWidth) +
           "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + Number(kImageWidth) + " " +
           std::to_string(height) + "\">\n";
    out += "<style type=\"text/css\"><![CDATA[\n";
    out += flamegraph::kFlameGraphStyle;
    out += "]]></style>\n<script type=\"text/ecmascript\"><![CDATA[\n";
    out += flamegraph::kFlameGraphScript;
    out += "]]></script>\n";
    out += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"100%\" height=\"100%\"/>\n";
    WriteHeader();
    WriteFrames();
    out += "<text id=\"details\" x=\"" + Number(kMargin) + "\" y=\"" + std::to_string(height - 10) + "\"> </text>\n";
    out += "<text id=\"matched\" x=\"" + Number(kImageWidth - kMargin) + "\" y=\"" + std::to_string(height - 10) +
           "\"> </text>\n";
    out += "</svg>\n";
    return std::move(out_);
  }

 private:
  static std::string Number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
  }

  std::string Value(double value) const {
    std::string text = views::FormatScaled(value, value_scale_);
    if (!value_scale_.suffix.empty()) text += " " + value_scale_.suffix;
    return text;
  }

  void WriteHeader() {
    std::string& out = out_;
    const std::string kind = options_.inverted ? "Icicle graph of callers" : "Flame graph";
    out += "<text id=\"title\" x=\"" + Number(kImageWidth / 2) + "\" y=\"24\">";
    AppendEscaped(out, kind + " of " + metric_.name + ": " + std::string(Basename(options_.profile_path)));
    out += "</text>\n<text id=\"subtitle\" x=\"" + Number(kImageWidth / 2) + "\" y=\"42\">";
    std::string subtitle = std::string(Basename(executable_));
    if (pid_ != 0) subtitle += " (pid " + std::to_string(pid_) + ")";
    subtitle += ", " + metric_.name + " " + Value(layout_.total) + "; frames under " +
                views::FormatScaled(100.0 * layout_.drawn_threshold / layout_.total, {"", 1, 4}) +
                "% of it not drawn" + (layout_.capped ? " (the widest " + std::to_string(kMaxFrames) + " kept)" : "");
    AppendEscaped(out, subtitle);
    out += "</text>\n";
    // The legend: one swatch per kind of frame, the spawn outline, and the task outline
    // when the graph has OpenMP task frames.
    struct Swatch {
      const char* label;
      std::string fill;
      const char* extra_class;
    };
    const Swatch swatches[] = {
        {"the program", ColorOf(Kind::kUser, "main"), ""},
        {"libraries", ColorOf(Kind::kLibrary, "memcpy"), ""},
        {"profiler markers", ColorOf(Kind::kMarker, "<partial unwind>"), ""},
        {"locks", ColorOf(Kind::kLock, "[lock m]"), ""},
        {options_.inverted ? "spawns the frame above" : "spawned by the frame below", "#ffffff", " s"},
        {options_.inverted ? "creates the task above" : "a task created by the frame below", "#ffffff", " t"},
    };
    const bool any_task = std::any_of(layout_.frames.begin(), layout_.frames.end(),
                                      [](const Frame& f) { return f.edge == views::Edge::kTask; });
    out += "<g id=\"legend\">";
    double x = kMargin;
    for (const Swatch& s : swatches) {
      if (std::string_view(s.extra_class) == " t" && !any_task) continue;
      out += "<g class=\"swatch" + std::string(s.extra_class) + "\"><rect x=\"" + Number(x) +
             "\" y=\"50\" width=\"14\" height=\"11\" fill=\"" + s.fill + "\"/><text x=\"" + Number(x + 19) +
             "\" y=\"60\">" + s.label + "</text></g>";
      x += 19 + kCharWidth * std::string_view(s.label).size() + 18;
    }
    out += "</g>\n";
    out += "<text id=\"reset-zoom\" class=\"button hidden\" x=\"" + Number(kMargin) + "\" y=\"24\">Reset zoom</text>\n";
    out += "<text id=\"clear-search\" class=\"button hidden\" x=\"" + Number(kImageWidth - kMargin - 60) +
           "\" y=\"24\">Clear</text>\n";
    out += "<text id=\"search\" class=\"button\" x=\"" + Number(kImageWidth - kMargin) + "\" y=\"24\">Search</text>\n";
  }

  // The frames' area: the script reads the direction and the total from its attributes.
  void WriteFrames() {
    std::string& out = out_;
    const int root_y = options_.inverted ? kHeaderHeight
                                          : kHeaderHeight + static_cast<int>(layout_.max_depth) * kFrameHeight;
    const int step = options_.inverted ? kFrameHeight : -kFrameHeight;
    out += "<svg id=\"frames\" x=\"" + Number(kMargin) + "\" y=\"0\" width=\"" + Number(kFramesWidth) +
           "\" overflow=\"visible\" data-root-y=\"" + std::to_string(root_y) + "\" data-step=\"" +
           std::to_string(step) + "\" data-total=\"" + views::FormatScaled(layout_.total, value_scale_) +
           "\" data-unit=\"" + value_scale_.suffix + "\" data-decimals=\"" + std::to_string(value_scale_.decimals) +
           "\" data-metric=\"";
    AppendEscaped(out, metric_.name);
    out += "\">\n";
    for (const Frame& frame : layout_.frames) WriteFrame(frame, root_y + static_cast<int>(frame.depth) * step);
    out += "</svg>\n";
  }

  void WriteFrame(const Frame& frame, int y) {
    std::string& out = out_;
    const Kind kind = KindOf(frame, executable_);
    const std::string name = frame.depth == 0 ? std::string(views::kProgramRootName) : FrameName(frame);
    const bool spawn = frame.edge == views::Edge::kSpawn, task = frame.edge == views::Edge::kTask;
    out += "<g class=\"frame ";
    out += KindClass(kind);
    if (spawn) out += " s";
    if (task) out += " t";
    out += "\"><title>";
    AppendEscaped(out, name);
    out += '\n';
    out += metric_.name + ": " + Value(frame.width) + " (" + views::FormatPercent(frame.width, layout_.total) + ")";
    if (!options_.inverted && frame.depth > 0) out += ", self " + Value(frame.self);
    if (spawn) out += options_.inverted ? "\nspawns the frame above" : "\nspawned by the frame below";
    if (task) out += options_.inverted ? "\ncreates the task above" : "\na task created by the frame below";
    if (kind == Kind::kLibrary && !frame.module->empty()) {
      out += "\nmodule ";
      AppendEscaped(out, *frame.module);
    }
    const std::string x = Percent(frame.x / layout_.total), width = Percent(frame.width / layout_.total);
    const std::string y_text = std::to_string(y);
    out += "</title><rect x=\"" + x + "%\" y=\"" + y_text + "\" width=\"" + width + "%\" height=\"" +
           std::to_string(kFrameHeight - 1) + "\" fill=\"" + ColorOf(kind, name) + "\"/>";
    const std::string text = FittedText(name, kFramesWidth * frame.width / layout_.total);
    if (!text.empty()) {
      out += "<text x=\"" + x + "%\" dx=\"3\" y=\"" + std::to_string(y + 11) + "\">";
      AppendEscaped(out, text);
      out += "</text>";
    }
    out += "</g>\n";
  }

  const Layout& layout_;
  const views::MetricInfo& metric_;
  const ExportOptions& options_;
  const std::string executable_;
  const uint32_t pid_;
  views::Scale value_scale_;
  std::string out_;
};

// The metrics whose values add up along a frame's width (not the percentages).
std::string AdditiveMetrics(const views::MetricColumns& metrics) {
  std::string list;
  for (const views::MetricInfo& m : metrics.columns()) {
    if (m.unit != "%") list += (list.empty() ? "" : ", ") + m.name;
  }
  return list;
}

}  // namespace

Status WriteFlameGraphSvg(const AnalysisInput& input, const ExportOptions& options, std::ostream& out) {
  views::BuildOptions build;
  // Bottom-up rows are functions: a "[lock X]" leaf's values are its lock call's.
  if (options.inverted) build.lock_mode = views::LockMode::kFoldIntoCaller;
  const views::RowTree tree = views::BuildTopDown(input.profile, input.nodes, build);
  auto metric = views::ResolveMetric(tree.metrics(), options.metric);
  if (!metric.ok()) return Status::Error(options.profile_path + ": " + metric.status().message());
  const views::MetricInfo& info = tree.metrics()[*metric];
  if (info.unit == "%") {
    return Status::Error(options.profile_path + ": '" + info.name +
                         "' is a percentage, and a flame graph's widths must add up; choose one of: " +
                         AdditiveMetrics(tree.metrics()));
  }
  std::optional<views::BottomUp> bottom_up;
  if (options.inverted) bottom_up.emplace(tree);
  const views::ViewSource source = bottom_up ? views::ViewSource(*bottom_up) : views::ViewSource(tree);
  flamegraph::LayoutOptions layout_options;
  layout_options.metric = *metric;
  layout_options.inverted = options.inverted;
  layout_options.min_fraction = kMinWidthPixels / kFramesWidth;
  layout_options.max_frames = kMaxFrames;
  const Layout layout = flamegraph::LayOut(source, layout_options);
  if (!(layout.total > 0)) {
    return Status::Error(options.profile_path + ": the profile has no " + info.name +
                         " to draw (its total is 0); choose another --metric: " + AdditiveMetrics(tree.metrics()));
  }
  out << SvgWriter(layout, info, options, input.profile).Write();
  return Status::Ok();
}

}  // namespace cilkprof::cli::exporters
