// A walked view held in memory: the rows a walk showed (walk.h), in display order,
// with their labels, values and call-site cells. For tests and for small views that
// code looks rows up in; renderers stream from the walk instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cilkprof/views/walk.h"

namespace cilkprof::views {

struct ViewNode {
  RowKind kind = RowKind::kContext;
  std::string name;    // the function (the file for kFile, the module path for kModule)
  std::string file;    // where the function is defined; for kLine/kFile the line's file
  uint32_t line = 0;   // the function's first line; for kLine the line itself; 0 unknown
  std::string module;  // load module path; "" when unknown
  Edge edge = Edge::kCall;
  bool inlined = false;            // every address folded into it was inlined code
  std::vector<double> inclusive;   // every metric column
  std::vector<double> exclusive;
  std::optional<CallSiteCell> cell;  // the call sites the row shows
  uint32_t parent = 0;
  std::vector<uint32_t> children;    // in display order

  RowView View() const;  // valid while this node lives
};

struct ViewTree {
  std::vector<MetricInfo> metrics;    // every metric column
  std::vector<double> program_total;  // every metric column
  std::vector<ViewNode> nodes;        // nodes[0] is the view's root
};

// The rows `source` shows with `options`.
ViewTree Materialize(const ViewSource& source, const ViewOptions& options = {});

std::string RowLabel(const ViewNode& node);

}  // namespace cilkprof::views
