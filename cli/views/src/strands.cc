// The strand table (see strands.h).
#include "cilkprof/views/strands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "cilkprof/views/text_table.h"
#include "cilkprof/views/units.h"
#include "cilkprof/views/workspan.h"

namespace cilkprof::views {
namespace {

using Json = nlohmann::ordered_json;

const char* PointName(int point) {
  switch (point) {
    case wire::STRAND_ENTER: return "enter";
    case wire::STRAND_SPAWN: return "spawn";
    case wire::STRAND_CHILD_END: return "child_end";
    case wire::STRAND_CONTINUE: return "continue";
    case wire::STRAND_SYNC: return "sync";
    case wire::STRAND_SYNC_END: return "sync_end";
    case wire::STRAND_EXIT: return "exit";
    case wire::STRAND_RETURN: return "return";
    case wire::STRAND_REGION: return "region";
    default: return "?";
  }
}

void Place(const profile::Profile& p, uint32_t location, std::string* file, uint32_t* line) {
  if (const profile::SourceFrame* f = UserFrameAt(p, location); f != nullptr) {
    *file = f->file();
    *line = f->line();
  }
}

double Percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::string Point(const std::string& kind, const std::string& file, uint32_t line) {
  return kind + " " + (file.empty() ? "??" : file + ":" + std::to_string(line));
}

}  // namespace

Result<std::vector<StrandRow>> StrandRows(const profile::Profile& p) {
  if (!p.has_workspan()) {
    return Status::Error("has no work/span data; record it with `cilkprof run --strands` on a program that uses the "
                         "Cilk runtime");
  }
  const profile::WorkSpan& ws = p.workspan();
  std::vector<StrandRow> rows;
  for (const profile::CallSite& c : ws.call_sites()) {
    if (c.kind() != wire::WORKSPAN_STRAND || c.count() == 0) continue;
    StrandRow row;
    row.start_point = PointName(c.start_point());
    row.end_point = PointName(c.end_point());
    Place(p, c.location(), &row.start_file, &row.start_line);
    Place(p, c.parent_location(), &row.end_file, &row.end_line);
    // The code a strand runs in: the start point's function, except where that point
    // is in another function: a spawned child's first strand runs the spawned
    // callable, and the code resuming after a scope ended (`return`) is the end
    // point's function (or, when it ends its spawned child, the spawned callable).
    uint32_t at = c.location();
    if (c.start_point() == wire::STRAND_RETURN) at = c.parent_location();
    const bool in_child = c.start_point() == wire::STRAND_SPAWN ||
                          (c.start_point() == wire::STRAND_RETURN && c.end_point() == wire::STRAND_CHILD_END);
    if (in_child) row.function = SpawnedCallableAt(p, at);
    if (row.function.empty()) {
      const profile::SourceFrame* f = UserFrameAt(p, at);
      row.function = f != nullptr && !f->function().empty() ? f->function() : "??";
    }
    row.count = c.count();
    row.work = static_cast<double>(c.work_on_work());
    row.span = static_cast<double>(c.span_on_span());
    row.work_percent = Percent(row.work, static_cast<double>(ws.work()));
    row.span_percent = Percent(row.span, static_cast<double>(ws.span()));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    return Status::Error("has no strand data; record it with `cilkprof run --strands` (strand metrics are off by "
                         "default because they cost a table lookup at every strand boundary)");
  }
  std::stable_sort(rows.begin(), rows.end(), [](const StrandRow& a, const StrandRow& b) { return a.work > b.work; });
  return rows;
}

Status SortStrands(std::vector<StrandRow>* rows, const std::string& column_in) {
  std::string column = column_in;
  std::replace(column.begin(), column.end(), '-', '_');
  using Less = std::function<bool(const StrandRow&, const StrandRow&)>;
  Less less;
  if (column == "work" || column == "work_on_work" || column == "span_on_work" || column == "work_percent") {
    less = [](const StrandRow& a, const StrandRow& b) { return a.work > b.work; };
  } else if (column == "span" || column == "work_on_span" || column == "span_on_span" || column == "span_percent" ||
             column == "span_%") {
    less = [](const StrandRow& a, const StrandRow& b) { return a.span > b.span; };
  } else if (column == "count") {
    less = [](const StrandRow& a, const StrandRow& b) { return a.count > b.count; };
  } else if (column == "function") {
    less = [](const StrandRow& a, const StrandRow& b) { return a.function < b.function; };
  } else if (column == "start") {
    less = [](const StrandRow& a, const StrandRow& b) {
      return a.start_file != b.start_file ? a.start_file < b.start_file : a.start_line < b.start_line;
    };
  } else if (column == "end") {
    less = [](const StrandRow& a, const StrandRow& b) {
      return a.end_file != b.end_file ? a.end_file < b.end_file : a.end_line < b.end_line;
    };
  } else {
    return Status::Error("unknown --sort column '" + column_in +
                         "' for strands; the columns are work, span, count, function, start, end");
  }
  std::stable_sort(rows->begin(), rows->end(), less);
  return Status::Ok();
}

std::string RenderStrandsText(const std::vector<StrandRow>& rows, const std::string& unit) {
  double largest = 0;
  for (const StrandRow& r : rows) largest = std::max(largest, r.work);
  const Scale scale = ChooseScale(unit, largest);
  const std::string suffix = scale.suffix.empty() ? "" : " (" + scale.suffix + ")";
  std::vector<TextColumn> columns = {{"work" + suffix, false, {}}, {"work %", false, {}}, {"span" + suffix, false, {}},
                                     {"span %", false, {}},        {"count", false, {}},  {"from", true, {}},
                                     {"to", true, {}},             {"function", true, {}}};
  char buf[64];
  for (const StrandRow& r : rows) {
    columns[0].cells.push_back(FormatScaled(r.work, scale));
    std::snprintf(buf, sizeof buf, "%.1f%%", r.work_percent);
    columns[1].cells.push_back(buf);
    columns[2].cells.push_back(FormatScaled(r.span, scale));
    std::snprintf(buf, sizeof buf, "%.1f%%", r.span_percent);
    columns[3].cells.push_back(buf);
    columns[4].cells.push_back(std::to_string(r.count));
    columns[5].cells.push_back(Point(r.start_point, r.start_file, r.start_line));
    columns[6].cells.push_back(Point(r.end_point, r.end_file, r.end_line));
    columns[7].cells.push_back(r.function);
  }
  return RenderTextTable(columns);
}

std::string RenderStrandsJson(const std::vector<StrandRow>& rows) {
  Json out = Json::array();
  for (const StrandRow& r : rows) {
    Json o;
    o["function"] = r.function;
    o["start_point"] = r.start_point;
    o["start_file"] = r.start_file;
    o["start_line"] = r.start_line;
    o["end_point"] = r.end_point;
    o["end_file"] = r.end_file;
    o["end_line"] = r.end_line;
    o["count"] = r.count;
    o["work_on_work"] = r.work;
    o["span_on_work"] = r.work;
    o["work_on_span"] = r.span;
    o["span_on_span"] = r.span;
    o["work_percent"] = r.work_percent;
    o["span_percent"] = r.span_percent;
    out.push_back(std::move(o));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RenderStrandsCsv(const std::vector<StrandRow>& rows) {
  std::string out =
      "function,start_point,start_file,start_line,end_point,end_file,end_line,count,work,span,work_percent,"
      "span_percent\n";
  for (const StrandRow& r : rows) {
    out += CsvField(r.function) + "," + r.start_point + "," + CsvField(r.start_file) + "," +
           std::to_string(r.start_line) + "," + r.end_point + "," + CsvField(r.end_file) + "," +
           std::to_string(r.end_line) + "," + std::to_string(r.count) + "," + FormatExact(r.work) + "," +
           FormatExact(r.span) + "," + FormatExact(r.work_percent) + "," + FormatExact(r.span_percent) + "\n";
  }
  return out;
}

}  // namespace cilkprof::views
