#include "cilkprof/views/render.h"
#include "cilkprof/views/text_table.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/units.h"

namespace cilkprof::views {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

double ValueAt(const std::vector<double>& values, size_t m) {
  return m < values.size() ? values[m] : 0.0;
}

const char* EdgeName(Edge edge) { return edge == Edge::kSpawn ? "spawn" : "call"; }

// Visits the pruned tree in display order with each node's depth.
template <typename Visit>
void PreOrder(const ViewTree& tree, Visit visit) {
  std::vector<std::pair<uint32_t, uint32_t>> stack{{0, 0}};
  while (!stack.empty()) {
    auto [n, depth] = stack.back();
    stack.pop_back();
    visit(n, depth);
    const auto& kids = tree.nodes[n].children;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, depth + 1});
  }
}

std::string PadLeft(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

}  // namespace

const char* ViewName(ViewKind kind) {
  switch (kind) {
    case ViewKind::kTopDown: return "top-down";
    case ViewKind::kBottomUp: return "bottom-up";
    case ViewKind::kFlat: return "flat";
  }
  return "?";
}

std::string RowLabel(const ViewNode& node) {
  std::string label;
  switch (node.kind) {
    case RowKind::kRoot:
    case RowKind::kPartialUnwind:
    case RowKind::kModule:
    case RowKind::kFile:
      return node.name;
    case RowKind::kLine:
      return (node.file.empty() ? std::string("??") : Basename(node.file)) + ":" +
             (node.line ? std::to_string(node.line) : std::string("?"));
    case RowKind::kContext:
    case RowKind::kFunction:
      break;
  }
  if (node.edge == Edge::kSpawn) label += "[spawn] ";
  label += node.name;
  if (node.name == "??") label += " [" + (node.module.empty() ? std::string("unknown module") : Basename(node.module)) + "]";
  if (node.inlined) label += " (inline)";
  return label;
}

std::string RenderText(const ViewTree& pruned, ViewKind kind, const ViewOptions& options,
                       const ViewHeader& header) {
  const size_t m = options.metric;
  const MetricInfo metric = m < pruned.metrics.size() ? pruned.metrics[m] : MetricInfo{"value", "count", ""};
  const double total = ValueAt(pruned.program_total, m);
  const Scale scale = ChooseScale(metric.unit, total);
  const std::string unit_suffix = scale.suffix.empty() ? "" : " (" + scale.suffix + ")";

  std::string out = "# cilkprof ";
  out += ViewName(kind);
  out += " view of " + header.profile_path;
  if (!header.program.empty()) {
    out += ": " + header.program;
    if (header.pid) out += " (pid " + std::to_string(header.pid) + ")";
  }
  out += "; " + metric.name;
  if (!scale.suffix.empty()) out += " in " + scale.suffix;
  out += ", total " + FormatScaled(total, scale) + (scale.suffix.empty() ? "" : " " + scale.suffix);
  out += "; sorted by ";
  out += options.sort_key == SortKey::kInclusive ? "inclusive " : "exclusive ";
  out += metric.name + "\n";

  // The call-site columns (work/span profiles only), scaled by their largest value.
  const std::vector<std::optional<CallSiteCell>> sites = CallSiteCells(pruned);
  const bool site_columns = pruned.call_sites.present;
  double largest_site_work = 0;
  for (const auto& cell : sites) {
    if (cell) largest_site_work = std::max(largest_site_work, cell->work);
  }
  if (largest_site_work == 0) {  // no row shows a site: keep the unit the table would use
    for (const CallSiteFigures& site : pruned.call_sites.sites) largest_site_work = std::max(largest_site_work, site.work_on_work);
  }
  const Scale site_scale = ChooseScale(pruned.call_sites.unit, largest_site_work);
  const std::string site_suffix = site_scale.suffix.empty() ? "" : " (" + site_scale.suffix + ")";

  struct Row {
    std::vector<std::string> cells;
    std::string label;
  };
  std::vector<Row> rows;
  PreOrder(pruned, [&](uint32_t n, uint32_t depth) {
    const ViewNode& node = pruned.nodes[n];
    const double incl = ValueAt(node.inclusive, m);
    const double excl = ValueAt(node.exclusive, m);
    Row row{{FormatScaled(incl, scale), FormatPercent(incl, total), FormatScaled(excl, scale),
             FormatPercent(excl, total)},
            std::string(2 * depth, ' ') + RowLabel(node)};
    if (site_columns) {
      const std::optional<CallSiteCell>& cell = sites[n];
      if (cell) {
        char buffer[64];
        row.cells.push_back(FormatScaled(cell->work, site_scale));
        row.cells.push_back(FormatScaled(cell->span, site_scale));
        if (cell->parallelism) {
          std::snprintf(buffer, sizeof buffer, "%.2f", *cell->parallelism);
          row.cells.push_back(buffer);
        } else {
          row.cells.push_back("");
        }
        std::snprintf(buffer, sizeof buffer, "%.1f%%", cell->span_percent);
        row.cells.push_back(buffer);
      } else {
        row.cells.insert(row.cells.end(), 4, "");
      }
    }
    rows.push_back(std::move(row));
  });
  std::vector<std::string> headers = {"Incl " + metric.name + unit_suffix, "Incl%",
                                      "Excl " + metric.name + unit_suffix, "Excl%"};
  if (site_columns) {
    headers.insert(headers.end(), {"Work(instr)" + site_suffix, "Span" + site_suffix, "Parallelism", "Span %"});
  }
  std::vector<size_t> widths(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) {
    widths[c] = headers[c].size();
    for (const Row& row : rows) widths[c] = std::max(widths[c], row.cells[c].size());
  }
  for (size_t c = 0; c < headers.size(); ++c) out += PadLeft(headers[c], widths[c]) + "  ";
  out += kind == ViewKind::kFlat ? "Location\n" : "Function\n";
  for (const Row& row : rows) {
    for (size_t c = 0; c < headers.size(); ++c) out += PadLeft(row.cells[c], widths[c]) + "  ";
    out += row.label + "\n";
  }
  return out;
}

std::string RenderJson(const ViewTree& pruned) {
  using Json = nlohmann::ordered_json;
  // Built bottom-up (children follow their parents in the node vector), so deep trees
  // need no recursion.
  std::vector<Json> built(pruned.nodes.size());
  const std::vector<std::optional<CallSiteCell>> sites = CallSiteCells(pruned);
  for (size_t i = pruned.nodes.size(); i-- > 0;) {
    const ViewNode& node = pruned.nodes[i];
    Json metrics = Json::object();
    for (size_t m = 0; m < pruned.metrics.size(); ++m) {
      metrics[pruned.metrics[m].name] = {{"inclusive", ValueAt(node.inclusive, m)},
                                         {"exclusive", ValueAt(node.exclusive, m)}};
    }
    Json children = Json::array();
    for (uint32_t child : node.children) children.push_back(std::move(built[child]));
    built[i] = Json{{"name", node.name},        {"file", node.file},
                    {"line", node.line},        {"module", node.module},
                    {"edge", EdgeName(node.edge)}, {"metrics", std::move(metrics)}};
    if (const std::optional<CallSiteCell>& cell = sites[i]) {
      built[i]["callsite"] = Json{{"work_instr", cell->work},
                                  {"span", cell->span},
                                  {"parallelism", cell->parallelism ? Json(*cell->parallelism) : Json(nullptr)},
                                  {"span_percent", cell->span_percent},
                                  {"count", cell->count},
                                  {"unit", pruned.call_sites.unit}};
    }
    built[i]["children"] = std::move(children);
  }
  return built[0].dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RenderCsv(const ViewTree& pruned) {
  std::string out = "depth,path,name,file,line,module,edge";
  for (const auto& metric : pruned.metrics) {
    out += "," + CsvField(metric.name + "_inclusive") + "," + CsvField(metric.name + "_exclusive");
  }
  const bool site_columns = pruned.call_sites.present;
  if (site_columns) out += ",work_instr,span,parallelism,span_percent";
  out += "\n";
  const std::vector<std::optional<CallSiteCell>> sites = CallSiteCells(pruned);
  std::vector<std::string> path_of(pruned.nodes.size());
  for (size_t i = 0; i < pruned.nodes.size(); ++i) {
    const ViewNode& node = pruned.nodes[i];
    // The "<program root>" row is not part of any path; a focused view's root is.
    if (i == 0) {
      path_of[i] = node.kind == RowKind::kRoot ? "" : node.name;
    } else {
      const std::string& parent = path_of[node.parent];
      path_of[i] = parent.empty() ? node.name : parent + ";" + node.name;
    }
  }
  PreOrder(pruned, [&](uint32_t n, uint32_t depth) {
    const ViewNode& node = pruned.nodes[n];
    out += std::to_string(depth) + "," + CsvField(path_of[n]) + "," + CsvField(node.name) + "," +
           CsvField(node.file) + "," + std::to_string(node.line) + "," + CsvField(node.module) + "," +
           EdgeName(node.edge);
    for (size_t m = 0; m < pruned.metrics.size(); ++m) {
      out += "," + FormatExact(ValueAt(node.inclusive, m)) + "," + FormatExact(ValueAt(node.exclusive, m));
    }
    if (site_columns) {
      if (const std::optional<CallSiteCell>& cell = sites[n]) {
        out += "," + FormatExact(cell->work) + "," + FormatExact(cell->span) + "," +
               (cell->parallelism ? FormatExact(*cell->parallelism) : std::string()) + "," +
               FormatExact(cell->span_percent);
      } else {
        out += ",,,,";
      }
    }
    out += "\n";
  });
  return out;
}

}  // namespace cilkprof::views
