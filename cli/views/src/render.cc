#include "cilkprof/views/render.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "cilkprof/views/text_table.h"
#include "cilkprof/views/units.h"

namespace cilkprof::views {
namespace {

double ValueAt(const std::vector<double>& values, size_t m) { return m < values.size() ? values[m] : 0.0; }

void PadLeft(std::string& line, const std::string& text, size_t width) {
  if (text.size() < width) line.append(width - text.size(), ' ');
  line += text;
}

// Shortest text that reads back as the same double, as JSON wants it.
void AppendJsonNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

// JSON string literals, escaped once per distinct string (names repeat on many rows).
class JsonStrings {
 public:
  const std::string& Quote(const std::string& text) {
    auto [it, inserted] = quoted_.try_emplace(&text);
    if (inserted) it->second = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return it->second;
  }

 private:
  std::unordered_map<const std::string*, std::string> quoted_;  // label strings never move
};

class TextRenderer : public RowVisitor {
 public:
  TextRenderer(ViewKind kind, const ViewOptions& options, const ViewHeader& header, OutputSink& out)
      : kind_(kind), options_(options), header_(header), out_(out) {}

  void Begin(const WalkInfo& info) override {
    const size_t m = options_.metric;
    const MetricInfo metric = m < info.metrics->size() ? (*info.metrics)[m] : MetricInfo{"value", "count", ""};
    total_ = ValueAt(info.program_total, m);
    scale_ = ChooseScale(metric.unit, total_);
    const std::string unit_suffix = scale_.suffix.empty() ? "" : " (" + scale_.suffix + ")";

    std::string line = "# cilkprof ";
    line += ViewName(kind_);
    line += " view of " + header_.profile_path;
    if (!header_.program.empty()) {
      line += ": " + header_.program;
      if (header_.pid) line += " (pid " + std::to_string(header_.pid) + ")";
    }
    line += "; " + metric.name;
    if (!scale_.suffix.empty()) line += " in " + scale_.suffix;
    line += ", total " + FormatScaled(total_, scale_) + (scale_.suffix.empty() ? "" : " " + scale_.suffix);
    line += "; sorted by ";
    line += options_.sort_key == SortKey::kInclusive ? "inclusive " : "exclusive ";
    line += metric.name;
    if (options_.threshold_percent > 0) {
      char threshold[64];
      std::snprintf(threshold, sizeof threshold, "%g%%", options_.threshold_percent);
      line += std::string("; rows under ") + threshold + " hidden";
      if (header_.default_threshold) line += " (--threshold 0 shows all)";
    }
    line += "\n";

    // No row's value exceeds the program total, nor a share 100%: the widths are known
    // before the first row.
    const std::string widest_value = FormatScaled(total_, scale_);
    headers_ = {"Incl " + metric.name + unit_suffix, "Incl%", "Excl " + metric.name + unit_suffix, "Excl%"};
    widths_ = {std::max(headers_[0].size(), widest_value.size()), 6, std::max(headers_[2].size(), widest_value.size()), 6};
    const CallSiteTable* sites = info.call_sites;
    site_columns_ = sites != nullptr && sites->present;
    if (site_columns_) {
      double largest = 0, work_bound = 0, span_bound = 0;
      for (const CallSiteFigures& site : sites->sites) {
        largest = std::max(largest, site.work_on_work);
        work_bound += site.work_on_work;
        span_bound += site.span_on_work;
      }
      site_scale_ = ChooseScale(sites->unit, largest);
      const std::string site_suffix = site_scale_.suffix.empty() ? "" : " (" + site_scale_.suffix + ")";
      headers_.insert(headers_.end(), {"Work(instr)" + site_suffix, "Span" + site_suffix, "Parallelism", "Span %"});
      // A row's cell sums distinct sites: the sums of all sites bound it.
      widths_.push_back(std::max(headers_[4].size(), FormatScaled(work_bound, site_scale_).size()));
      widths_.push_back(std::max(headers_[5].size(), FormatScaled(span_bound, site_scale_).size()));
      widths_.push_back(headers_[6].size());
      widths_.push_back(headers_[7].size());
    }
    for (size_t c = 0; c < headers_.size(); ++c) {
      PadLeft(line, headers_[c], widths_[c]);
      line += "  ";
    }
    line += kind_ == ViewKind::kFlat ? "Location\n" : "Function\n";
    out_.Append(line);
  }

  void Enter(const RowView& row, uint32_t depth) override {
    const size_t m = options_.metric;
    const double incl = row.inclusive[m], excl = row.exclusive[m];
    line_.clear();
    PadLeft(line_, FormatScaled(incl, scale_), widths_[0]);
    line_ += "  ";
    PadLeft(line_, FormatPercent(incl, total_), widths_[1]);
    line_ += "  ";
    PadLeft(line_, FormatScaled(excl, scale_), widths_[2]);
    line_ += "  ";
    PadLeft(line_, FormatPercent(excl, total_), widths_[3]);
    line_ += "  ";
    if (site_columns_) {
      char buffer[64];
      std::string cells[4];
      if (row.cell) {
        cells[0] = FormatScaled(row.cell->work, site_scale_);
        cells[1] = FormatScaled(row.cell->span, site_scale_);
        if (row.cell->parallelism) {
          std::snprintf(buffer, sizeof buffer, "%.2f", *row.cell->parallelism);
          cells[2] = buffer;
        }
        std::snprintf(buffer, sizeof buffer, "%.1f%%", row.cell->span_percent);
        cells[3] = buffer;
      }
      for (size_t c = 0; c < 4; ++c) {
        PadLeft(line_, cells[c], widths_[4 + c]);
        line_ += "  ";
      }
    }
    line_.append(2 * size_t{depth}, ' ');
    line_ += RowLabel(row);
    line_ += '\n';
    out_.Append(line_);
  }

 private:
  ViewKind kind_;
  const ViewOptions& options_;
  const ViewHeader& header_;
  OutputSink& out_;
  double total_ = 0;
  Scale scale_, site_scale_;
  bool site_columns_ = false;
  std::vector<std::string> headers_;
  std::vector<size_t> widths_;
  std::string line_;
};

class JsonRenderer : public RowVisitor {
 public:
  explicit JsonRenderer(OutputSink& out) : out_(out) {}

  void Begin(const WalkInfo& info) override {
    for (const MetricInfo& metric : info.metrics->columns()) metric_keys_.push_back(strings_.Quote(metric.name));
    unit_ = info.call_sites != nullptr ? info.call_sites->unit : "";
  }

  void Enter(const RowView& row, uint32_t depth) override {
    line_.clear();
    if (depth > 0) {
      line_ += has_children_[depth - 1] ? ",\n" : "\n";
      has_children_[depth - 1] = true;
    }
    has_children_.resize(depth + 1);
    has_children_[depth] = false;
    line_.append(2 * size_t{depth}, ' ');
    line_ += "{\"name\": " + strings_.Quote(*row.name) + ", \"file\": " + strings_.Quote(*row.file) +
             ", \"line\": " + std::to_string(row.line) + ", \"module\": " + strings_.Quote(*row.module) +
             ", \"edge\": \"" + EdgeName(row.edge) + "\", \"inlined\": " + (row.inlined ? "true" : "false") +
             ", \"metrics\": {";
    for (size_t m = 0; m < metric_keys_.size(); ++m) {
      if (m > 0) line_ += ", ";
      line_ += metric_keys_[m] + ": {\"inclusive\": ";
      AppendJsonNumber(line_, row.inclusive[m]);
      line_ += ", \"exclusive\": ";
      AppendJsonNumber(line_, row.exclusive[m]);
      line_ += "}";
    }
    line_ += "}";
    if (row.cell) {
      line_ += ", \"callsite\": {\"work_instr\": ";
      AppendJsonNumber(line_, row.cell->work);
      line_ += ", \"span\": ";
      AppendJsonNumber(line_, row.cell->span);
      line_ += ", \"parallelism\": ";
      if (row.cell->parallelism) {
        AppendJsonNumber(line_, *row.cell->parallelism);
      } else {
        line_ += "null";
      }
      line_ += ", \"span_percent\": ";
      AppendJsonNumber(line_, row.cell->span_percent);
      line_ += ", \"count\": " + std::to_string(row.cell->count) + ", \"unit\": " + strings_.Quote(unit_) + "}";
    }
    line_ += ", \"children\": [";
    out_.Append(line_);
  }

  void Leave(uint32_t depth) override {
    line_.clear();
    if (has_children_[depth]) {
      line_ += "\n";
      line_.append(2 * size_t{depth}, ' ');
    }
    line_ += "]}";
    if (depth == 0) line_ += "\n";
    out_.Append(line_);
  }

 private:
  OutputSink& out_;
  JsonStrings strings_;
  std::vector<std::string> metric_keys_;
  std::string unit_;
  std::vector<bool> has_children_;  // per depth on the current path
  std::string line_;
};

class CsvRenderer : public RowVisitor {
 public:
  explicit CsvRenderer(OutputSink& out) : out_(out) {}

  void Begin(const WalkInfo& info) override {
    std::string line = "depth,path,name,file,line,module,edge,inlined";
    for (const MetricInfo& metric : info.metrics->columns()) {
      line += "," + CsvField(metric.name + "_inclusive") + "," + CsvField(metric.name + "_exclusive");
    }
    columns_ = info.metrics->size();
    site_columns_ = info.call_sites != nullptr && info.call_sites->present;
    if (site_columns_) line += ",work_instr,span,parallelism,span_percent";
    line += "\n";
    out_.Append(line);
  }

  void Enter(const RowView& row, uint32_t depth) override {
    // The "<program root>" row is not part of any path; a focused view's root is.
    path_.resize(depth);
    const std::string& parent = path_.empty() ? std::string() : path_.back();
    std::string path;
    if (depth == 0) {
      path = row.kind == RowKind::kRoot ? "" : *row.name;
    } else {
      path = parent.empty() ? *row.name : parent + ";" + *row.name;
    }
    line_ = std::to_string(depth) + "," + CsvField(path) + "," + CsvField(*row.name) + "," + CsvField(*row.file) +
            "," + std::to_string(row.line) + "," + CsvField(*row.module) + "," + EdgeName(row.edge) + "," +
            (row.inlined ? "1" : "0");
    for (size_t m = 0; m < columns_; ++m) {
      line_ += "," + FormatExact(row.inclusive[m]) + "," + FormatExact(row.exclusive[m]);
    }
    if (site_columns_) {
      if (row.cell) {
        line_ += "," + FormatExact(row.cell->work) + "," + FormatExact(row.cell->span) + "," +
                 (row.cell->parallelism ? FormatExact(*row.cell->parallelism) : std::string()) + "," +
                 FormatExact(row.cell->span_percent);
      } else {
        line_ += ",,,,";
      }
    }
    line_ += "\n";
    out_.Append(line_);
    path_.push_back(std::move(path));
  }

 private:
  OutputSink& out_;
  size_t columns_ = 0;
  bool site_columns_ = false;
  std::vector<std::string> path_;  // per depth on the current path
  std::string line_;
};

}  // namespace

bool OutputSink::Flush() {
  if (file_ == nullptr) return !failed_;
  if (!buffer_.empty()) {
    if (!failed_ && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
    buffer_.clear();
  }
  if (!failed_ && std::fflush(file_) != 0) failed_ = true;
  return !failed_;
}

void RenderText(const ViewSource& source, ViewKind kind, const ViewOptions& options, const ViewHeader& header,
                OutputSink& out) {
  TextRenderer renderer(kind, options, header, out);
  Walk(source, options, renderer);
}

void RenderJson(const ViewSource& source, const ViewOptions& options, OutputSink& out) {
  JsonRenderer renderer(out);
  Walk(source, options, renderer);
}

void RenderCsv(const ViewSource& source, const ViewOptions& options, OutputSink& out) {
  CsvRenderer renderer(out);
  Walk(source, options, renderer);
}

std::string RenderText(const ViewSource& source, ViewKind kind, const ViewOptions& options, const ViewHeader& header) {
  OutputSink out;
  RenderText(source, kind, options, header, out);
  return std::move(out.text());
}

std::string RenderJson(const ViewSource& source, const ViewOptions& options) {
  OutputSink out;
  RenderJson(source, options, out);
  return std::move(out.text());
}

std::string RenderCsv(const ViewSource& source, const ViewOptions& options) {
  OutputSink out;
  RenderCsv(source, options, out);
  return std::move(out.text());
}

}  // namespace cilkprof::views
