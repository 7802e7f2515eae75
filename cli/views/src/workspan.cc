// Views of the work/span instrumentation (see workspan.h).
#include "cilkprof/views/workspan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#include "cilkprof/views/text_table.h"
#include "cilkprof/views/units.h"

namespace cilkprof::views {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kNoWorkSpan =
    "has no work/span data; record it with `cilkprof run` on a program that uses the Cilk runtime "
    "(work/span is measured unless --workspan=off or --no-workspan is given)";

bool IsLibraryFunction(const std::string& name) {
  return name.rfind("cilk::", 0) == 0 || name.rfind("void cilk::", 0) == 0;
}

// The user function of a location: the innermost frame not in the Cilk library's
// templates (they are inlined into the user's code), else the outermost frame.
const profile::SourceFrame* UserFrame(const profile::Profile& p, uint32_t location) {
  if (location == 0 || location >= static_cast<uint32_t>(p.locations_size())) return nullptr;
  const auto& frames = p.locations(static_cast<int>(location)).frames();
  if (frames.empty()) return nullptr;
  for (int i = frames.size() - 1; i >= 0; --i) {
    if (!IsLibraryFunction(frames[i].function())) return &frames[i];
  }
  return &frames[0];
}

std::string FunctionAt(const profile::Profile& p, uint32_t location, const char* absent) {
  const profile::SourceFrame* f = UserFrame(p, location);
  return f != nullptr && !f->function().empty() ? f->function() : absent;
}

// The callable a spawn passed: the template argument of the inlined
// cilk::scope::spawn<F> frame, e.g. "fib(int)::{lambda()#1}".
std::string SpawnedCallable(const profile::Profile& p, uint32_t location) {
  if (location == 0 || location >= static_cast<uint32_t>(p.locations_size())) return "";
  for (const profile::SourceFrame& f : p.locations(static_cast<int>(location)).frames()) {
    const std::string& name = f.function();
    const size_t at = name.find("cilk::scope::spawn<");
    if (at == std::string::npos) continue;
    const size_t open = at + std::string("cilk::scope::spawn").size();
    int depth = 0;
    for (size_t i = open; i < name.size(); ++i) {
      if (name[i] == '<') ++depth;
      if (name[i] == '>' && --depth == 0) {
        std::string arg = name.substr(open + 1, i - open - 1);
        while (!arg.empty() && (arg.back() == '&' || arg.back() == ' ')) arg.pop_back();
        return arg;
      }
    }
  }
  return "";
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

const profile::SourceFrame* UserFrameAt(const profile::Profile& p, uint32_t location) {
  return UserFrame(p, location);
}

std::string SpawnedCallableAt(const profile::Profile& p, uint32_t location) { return SpawnedCallable(p, location); }

Result<std::vector<CallSiteRow>> CallSiteRows(const profile::Profile& p) {
  if (!p.has_workspan()) return Status::Error(kNoWorkSpan);
  const profile::WorkSpan& ws = p.workspan();
  std::vector<CallSiteRow> rows;
  // One row per source-level call site: call instructions on the same line of the
  // same caller calling the same callee (a call the compiler duplicated, `f(a) +
  // f(b)`) add up.
  std::map<std::tuple<std::string, std::string, std::string, std::string, uint32_t>, size_t> row_of;
  for (const profile::CallSite& c : ws.call_sites()) {
    if (c.kind() == wire::WORKSPAN_STRAND) continue;  // `view strands` (strands.h)
    if (c.count() == 0 && c.work_on_work() == 0) continue;
    CallSiteRow row;
    const profile::SourceFrame* at = UserFrame(p, c.location());
    if (at != nullptr) {
      row.file = at->file();
      row.line = at->line();
    }
    if (c.kind() == wire::WORKSPAN_SPAWN) {
      row.kind = "spawn";
      row.caller = FunctionAt(p, c.location(), "??");
      if (c.callee_location() != 0) {
        row.callee = FunctionAt(p, c.callee_location(), "??");
      } else {
        row.callee = SpawnedCallable(p, c.location());
        if (row.callee.empty()) row.callee = "(spawned code)";
      }
    } else if (c.callee_location() != 0) {
      // The call instruction in the caller; the callee's scope entry or function entry.
      row.kind = "call";
      row.caller = FunctionAt(p, c.location(), "??");
      row.callee = FunctionAt(p, c.callee_location(), "??");
    } else {
      // Profiles written before call sites were call instructions: the location is
      // the callee's scope entry, the parent its enclosing context.
      row.kind = "call";
      row.callee = FunctionAt(p, c.location(), "??");
      row.caller = c.parent_location() != 0 ? FunctionAt(p, c.parent_location(), "??") : "(root)";
    }
    const auto key = std::make_tuple(row.kind, row.caller, row.callee, row.file, row.line);
    auto [it, fresh] = row_of.emplace(key, rows.size());
    if (fresh) rows.push_back(std::move(row));
    CallSiteRow& r = rows[it->second];
    r.count += c.count();
    r.work_on_work += static_cast<double>(c.work_on_work());
    r.span_on_work += static_cast<double>(c.span_on_work());
    r.work_on_span += static_cast<double>(c.work_on_span());
    r.span_on_span += static_cast<double>(c.span_on_span());
    r.burdened_span_on_work += static_cast<double>(c.burdened_span_on_work());
  }
  for (CallSiteRow& row : rows) {
    row.parallelism = Ratio(row.work_on_work, row.span_on_work);
    row.span_percent = 100.0 * Ratio(row.span_on_span, static_cast<double>(ws.span()));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const CallSiteRow& a, const CallSiteRow& b) { return a.work_on_work > b.work_on_work; });
  return rows;
}

Result<WorkSpanFigures> WholeProgram(const profile::Profile& p) {
  if (!p.has_workspan()) return Status::Error(kNoWorkSpan);
  const profile::WorkSpan& ws = p.workspan();
  WorkSpanFigures f;
  f.clock = ws.clock();
  f.unit = ws.unit().empty() ? "ns" : ws.unit();
  f.work = static_cast<double>(ws.work());
  f.span = static_cast<double>(ws.span());
  f.burdened_span = static_cast<double>(ws.burdened_span());
  f.parallelism = Ratio(f.work, f.span);
  f.burdened_parallelism = Ratio(f.work, f.burdened_span);
  f.spawns = ws.spawns();
  f.syncs = ws.syncs();
  f.computations = ws.computations();
  f.average_maximal_strand = f.work / (1.0 + 2.0 * static_cast<double>(f.spawns) + static_cast<double>(f.syncs));
  f.burden = static_cast<double>(ws.burden());
  for (uint32_t p2 = 1; p2 <= 256; p2 *= 2) {
    const double P = p2;
    WorkSpanFigures::Speedup s;
    s.p = p2;
    s.upper = std::min(P, f.parallelism);
    const double denominator = f.work / P + 1.7 * (1.0 - 1.0 / P) * f.burdened_span;
    s.lower = denominator > 0 ? f.work / denominator : 0.0;
    f.speedup.push_back(s);
  }
  f.incomplete = ws.incomplete();
  f.sites_dropped = ws.sites_dropped();
  f.regions_dropped = ws.regions_dropped();
  f.separate_run_pid = ws.separate_run_pid();
  f.separate_run_s = static_cast<double>(ws.separate_run_ns()) / 1e9;
  f.model = ws.model();
  f.tasks_with_dependences = ws.tasks_with_dependences();
  return f;
}

Status SortCallSites(std::vector<CallSiteRow>* rows, const std::string& column_in) {
  std::string column = column_in;
  std::replace(column.begin(), column.end(), '-', '_');
  using Less = std::function<bool(const CallSiteRow&, const CallSiteRow&)>;
  auto by_number = [](double CallSiteRow::*field) -> Less {
    return [field](const CallSiteRow& a, const CallSiteRow& b) { return a.*field > b.*field; };
  };
  Less less;
  if (column == "caller") {
    less = [](const CallSiteRow& a, const CallSiteRow& b) { return a.caller < b.caller; };
  } else if (column == "callee") {
    less = [](const CallSiteRow& a, const CallSiteRow& b) { return a.callee < b.callee; };
  } else if (column == "file") {
    less = [](const CallSiteRow& a, const CallSiteRow& b) {
      return a.file != b.file ? a.file < b.file : a.line < b.line;
    };
  } else if (column == "line") {
    less = [](const CallSiteRow& a, const CallSiteRow& b) { return a.line < b.line; };
  } else if (column == "kind") {
    less = [](const CallSiteRow& a, const CallSiteRow& b) { return a.kind < b.kind; };
  } else if (column == "count") {
    less = [](const CallSiteRow& a, const CallSiteRow& b) { return a.count > b.count; };
  } else if (column == "work_on_work" || column == "work") {
    less = by_number(&CallSiteRow::work_on_work);
  } else if (column == "span_on_work") {
    less = by_number(&CallSiteRow::span_on_work);
  } else if (column == "work_on_span") {
    less = by_number(&CallSiteRow::work_on_span);
  } else if (column == "span_on_span" || column == "span" || column == "span_%" || column == "span_percent") {
    less = by_number(&CallSiteRow::span_on_span);
  } else if (column == "parallelism") {
    // Lowest parallelism first: the scalability bottlenecks.
    less = [](const CallSiteRow& a, const CallSiteRow& b) { return a.parallelism < b.parallelism; };
  } else {
    return Status::Error("unknown --sort column '" + column_in +
                         "'; the columns are caller, callee, file, line, kind, count, work_on_work, "
                         "span_on_work, work_on_span, span_on_span, parallelism");
  }
  std::stable_sort(rows->begin(), rows->end(), less);
  return Status::Ok();
}

std::string RenderCallSitesText(const std::vector<CallSiteRow>& rows, const std::string& unit) {
  double largest = 0;
  for (const CallSiteRow& r : rows) largest = std::max(largest, r.work_on_work);
  const Scale scale = ChooseScale(unit, largest);
  const std::string suffix = scale.suffix.empty() ? "" : " (" + scale.suffix + ")";
  std::vector<TextColumn> columns = {
      {"work-on-work" + suffix, false, {}}, {"span-on-work" + suffix, false, {}},
      {"work-on-span" + suffix, false, {}}, {"span-on-span" + suffix, false, {}},
      {"parallelism", false, {}},           {"span %", false, {}},
      {"count", false, {}},                 {"kind", true, {}},
      {"caller", true, {}},                 {"callee", true, {}},
      {"file:line", true, {}}};
  char buf[64];
  for (const CallSiteRow& r : rows) {
    columns[0].cells.push_back(FormatScaled(r.work_on_work, scale));
    columns[1].cells.push_back(FormatScaled(r.span_on_work, scale));
    columns[2].cells.push_back(FormatScaled(r.work_on_span, scale));
    columns[3].cells.push_back(FormatScaled(r.span_on_span, scale));
    std::snprintf(buf, sizeof buf, "%.2f", r.parallelism);
    columns[4].cells.push_back(r.span_on_work > 0 ? buf : "-");
    std::snprintf(buf, sizeof buf, "%.1f%%", r.span_percent);
    columns[5].cells.push_back(buf);
    columns[6].cells.push_back(std::to_string(r.count));
    columns[7].cells.push_back(r.kind);
    columns[8].cells.push_back(r.caller);
    columns[9].cells.push_back(r.callee);
    columns[10].cells.push_back(r.file.empty() ? "??" : r.file + ":" + std::to_string(r.line));
  }
  std::string out = RenderTextTable(columns);
  if (rows.empty()) out += "(no call sites)\n";
  return out;
}

std::string RenderCallSitesJson(const std::vector<CallSiteRow>& rows) {
  Json out = Json::array();
  for (const CallSiteRow& r : rows) {
    Json o;
    o["caller"] = r.caller;
    o["callee"] = r.callee;
    o["file"] = r.file;
    o["line"] = r.line;
    o["kind"] = r.kind;
    o["count"] = r.count;
    o["work_on_work"] = r.work_on_work;
    o["span_on_work"] = r.span_on_work;
    o["work_on_span"] = r.work_on_span;
    o["span_on_span"] = r.span_on_span;
    o["parallelism"] = r.parallelism;
    out.push_back(std::move(o));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RenderCallSitesCsv(const std::vector<CallSiteRow>& rows) {
  std::string out =
      "caller,callee,file,line,kind,count,work_on_work,span_on_work,work_on_span,span_on_span,parallelism\n";
  for (const CallSiteRow& r : rows) {
    out += CsvField(r.caller) + "," + CsvField(r.callee) + "," + CsvField(r.file) + "," + std::to_string(r.line) +
           "," + r.kind + "," + std::to_string(r.count) + "," + FormatExact(r.work_on_work) + "," +
           FormatExact(r.span_on_work) + "," + FormatExact(r.work_on_span) + "," + FormatExact(r.span_on_span) +
           "," + FormatExact(r.parallelism) + "\n";
  }
  return out;
}

namespace {

std::string Grouped(double value) {
  const long long v = std::llround(value);
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace

std::string RenderWorkSpanText(const WorkSpanFigures& f) {
  const std::string unit = " " + f.unit;
  auto row = [](const std::string& label, const std::string& value) {
    std::string l = label;
    if (l.size() < 32) l += std::string(32 - l.size(), ' ');
    return "  " + l + value + "\n";
  };
  std::string source = "instrumented";
  if (f.separate_run_pid != 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f s", f.separate_run_s);
    source = "a second, instrumented run: pid " + std::to_string(f.separate_run_pid) + ", " + seconds;
  }
  std::string out = "\nWork and span (" + source + "; " + f.clock + " clock, " + std::to_string(f.computations) +
                    " top-level computation" + (f.computations == 1 ? "" : "s") + ")\n";
  const bool openmp = !f.model.empty();
  if (openmp) out += row("Model :", f.model);
  out += row("Work :", Grouped(f.work) + unit);
  out += row("Span :", Grouped(f.span) + unit);
  out += row("Burdened span :", Grouped(f.burdened_span) + unit + " (burden " + Grouped(f.burden) + unit +
                                    (openmp ? " per task)" : " per spawn)"));
  out += row("Parallelism :", Fixed(f.parallelism, 2));
  out += row("Burdened parallelism :", Fixed(f.burdened_parallelism, 2));
  out += row(openmp ? "Number of tasks/syncs :" : "Number of spawns/syncs :", Grouped(static_cast<double>(f.spawns)) + " / " +
                                             Grouped(static_cast<double>(f.syncs)));
  out += row("Average maximal strand :", Grouped(f.average_maximal_strand) + unit);
  out += "  Speedup estimate (lower - upper bound)\n";
  for (const auto& s : f.speedup) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "    %3u processor%s %8.2f - %.2f\n", s.p, s.p == 1 ? ": " : "s:", s.lower,
                  s.upper);
    out += buf;
  }
  if (f.incomplete) out += "  warning: the instrumentation ran out of memory; these figures are partial\n";
  if (f.tasks_with_dependences != 0) {
    out += "  note: " + std::to_string(f.tasks_with_dependences) + " of " + std::to_string(f.spawns) +
           " tasks had depend clauses; dependences are not edges of the measured dag (each such task starts at "
           "its creator's span when created), so the span is a lower bound and the parallelism an upper bound\n";
  }
  if (f.sites_dropped != 0) {
    out += "  warning: " + std::to_string(f.sites_dropped) +
           " invocations of call sites beyond the table's capacity are in the totals but not in the call-site table\n";
  }
  return out;
}

std::string AddWorkSpanToSummaryJson(const std::string& summary_json, const WorkSpanFigures& f) {
  Json out = Json::parse(summary_json, nullptr, /*allow_exceptions=*/false);
  if (!out.is_object()) return summary_json;
  out["work"] = f.work;
  out["span"] = f.span;
  out["burdened_span"] = f.burdened_span;
  out["parallelism"] = f.parallelism;
  out["burdened_parallelism"] = f.burdened_parallelism;
  out["spawns"] = f.spawns;
  out["syncs"] = f.syncs;
  out["average_maximal_strand"] = f.average_maximal_strand;
  Json speedup = Json::array();
  for (const auto& s : f.speedup) speedup.push_back(Json{{"p", s.p}, {"lower", s.lower}, {"upper", s.upper}});
  out["speedup"] = std::move(speedup);
  out["workspan_unit"] = f.unit;
  out["workspan_clock"] = f.clock;
  // "separate": a second, instrumented run measured them; "same": the sampled run.
  out["workspan_run"] = f.separate_run_pid != 0 ? "separate" : "same";
  if (f.separate_run_pid != 0) out["workspan_run_seconds"] = f.separate_run_s;
  if (!f.model.empty()) {
    out["workspan_model"] = f.model;
    out["tasks_with_dependences"] = f.tasks_with_dependences;
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

struct WhatIf {
  std::vector<uint32_t> factors;
  std::vector<std::string> sets;              // "all regions", then each region
  std::vector<std::vector<double>> parallelism;  // [set][factor]
  double baseline = 0;
};

Result<WhatIf> ComputeWhatIf(const profile::Profile& p) {
  if (!p.has_workspan()) return Status::Error(kNoWorkSpan);
  const profile::WorkSpan& ws = p.workspan();
  if (ws.regions().empty()) {
    return Status::Error(
        "has no annotated regions; annotate the code to consider with `cilkprof::region r(\"name\");` "
        "(cilkprof/cilkprof.h) and profile again");
  }
  WhatIf w;
  w.factors.assign(ws.whatif_factors().begin(), ws.whatif_factors().end());
  const double work = static_cast<double>(ws.work());
  w.baseline = Ratio(work, static_cast<double>(ws.span()));
  const size_t nf = w.factors.size();
  const size_t sets = nf == 0 ? 0 : std::min<size_t>(static_cast<size_t>(ws.whatif_span_size()) / nf,
                                                     static_cast<size_t>(ws.regions_size()) + 1);
  for (size_t s = 0; s < sets; ++s) {
    w.sets.push_back(s == 0 ? "all regions" : ws.regions(static_cast<int>(s - 1)));
    std::vector<double> row;
    for (size_t f = 0; f < nf; ++f) row.push_back(Ratio(work, ws.whatif_span(static_cast<int>(s * nf + f))));
    w.parallelism.push_back(std::move(row));
  }
  return w;
}

}  // namespace

Result<std::string> RenderWhatIfText(const profile::Profile& p) {
  auto w = ComputeWhatIf(p);
  if (!w.ok()) return w.status();
  std::string out =
      "\nWhat-if (causal profile): whole-program parallelism if the regions' critical work were N times smaller\n";
  size_t name_width = 12;
  for (const std::string& s : w->sets) name_width = std::max(name_width, s.size());
  std::string header = "  " + std::string("region") + std::string(name_width - 6, ' ') + "      now";
  for (uint32_t f : w->factors) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "  %7ux", f);
    header += buf;
  }
  out += header + "\n";
  for (size_t s = 0; s < w->sets.size(); ++s) {
    std::string line = "  " + w->sets[s] + std::string(name_width - w->sets[s].size(), ' ');
    char buf[32];
    std::snprintf(buf, sizeof buf, "  %7.2f", w->baseline);
    line += buf;
    for (double v : w->parallelism[s]) {
      std::snprintf(buf, sizeof buf, "  %8.2f", v);
      line += buf;
    }
    out += line + "\n";
  }
  return out;
}

Result<std::string> RenderWhatIfJson(const profile::Profile& p) {
  auto w = ComputeWhatIf(p);
  if (!w.ok()) return w.status();
  Json out;
  out["parallelism"] = w->baseline;
  out["factors"] = w->factors;
  Json sets = Json::array();
  for (size_t s = 0; s < w->sets.size(); ++s) {
    sets.push_back(Json{{"region", s == 0 ? Json(nullptr) : Json(w->sets[s])}, {"parallelism", w->parallelism[s]}});
  }
  out["what_if"] = std::move(sets);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<std::string> RenderCilkscaleCsv(const profile::Profile& p) {
  auto rows = CallSiteRows(p);
  if (!rows.ok()) return rows.status();
  auto whole = WholeProgram(p);
  if (!whole.ok()) return whole.status();
  std::string out = "tag,work (u),span (u),parallelism,burdened_span (u),burdened_parallelism\n";
  auto line = [&](const std::string& tag, double work, double span, double burdened) {
    out += CsvField(tag) + "," + FormatExact(work) + "," + FormatExact(span) + "," + FormatExact(Ratio(work, span)) +
           "," + FormatExact(burdened) + "," + FormatExact(Ratio(work, burdened)) + "\n";
  };
  for (const CallSiteRow& r : *rows) {
    line(r.kind + " " + r.caller + " -> " + r.callee + " " + r.file + ":" + std::to_string(r.line), r.work_on_work,
         r.span_on_work, r.burdened_span_on_work);
  }
  line("", whole->work, whole->span, whole->burdened_span);
  return out;
}

}  // namespace cilkprof::views
