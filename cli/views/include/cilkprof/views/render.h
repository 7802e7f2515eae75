// Renderers of a pruned view tree (filter.h): text for people, JSON and CSV for
// scripts. JSON and CSV are a stable contract, documented in docs/USER_GUIDE.md.
#pragma once

#include <string>

#include "cilkprof/views/filter.h"
#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {

enum class ViewKind { kTopDown, kBottomUp, kFlat };

const char* ViewName(ViewKind kind);  // "top-down", "bottom-up", "flat"

// What the text header names.
struct ViewHeader {
  std::string profile_path;
  std::string program;  // executable path
  uint32_t pid = 0;
};

// One header line, a column header, then one row per node, indented two spaces per
// level: "Incl work (ms)  Incl%  Excl work (ms)  Excl%  Function". Spawn edges read
// "[spawn] f", inlined functions "f (inline)", unknown code "?? [module]". With
// work/span data (ViewTree::call_sites.present) the call-site columns follow the
// sampled ones: "Work(instr) (ms)  Span (ms)  Parallelism  Span %", blank on rows
// without sites (callsite_columns.h).
std::string RenderText(const ViewTree& pruned, ViewKind kind, const ViewOptions& options,
                       const ViewHeader& header);

// The tree as nested objects, each with exactly: name, file, line, module, edge
// ("call"/"spawn"), metrics ({metric: {"inclusive": x, "exclusive": y}} for every
// metric, in the profile's raw units) and children; rows carrying call sites also
// "callsite" ({work_instr, span, parallelism (null when the span is 0), span_percent,
// count, unit}) before children. Ends with a newline.
std::string RenderJson(const ViewTree& pruned);

// One row per node in display order: depth, path (names from the view root joined
// with ';'), name, file, line, module, edge, then <metric>_inclusive and
// <metric>_exclusive for every metric, then with work/span data work_instr, span,
// parallelism, span_percent (empty on rows without sites). RFC 4180 quoting.
std::string RenderCsv(const ViewTree& pruned);

// The label of a row as text shows it (without indentation).
std::string RowLabel(const ViewNode& node);

}  // namespace cilkprof::views
