// Building the three views from a profile's address-level calling-context tree.
//
// A profile node is one code address (or a "<partial unwind>" marker) under its
// parent; its location expands into source frames, outermost first (inlined calls).
// The views fold that tree:
//   top-down   the function-level calling-context tree (hpcviewer's calling-context
//              view): every address node becomes its chain of frames, and siblings
//              merge by (function, module, edge). Inclusive = exclusive + children.
//   bottom-up  every function's exclusive cost at the top level, expandable into its
//              callers (the caller tree beneath it, as hpcviewer's callers view). A
//              row's inclusive value counts each sample once even under recursion.
//   flat       load module > file > function > line (hpcviewer's flat view).
//              Exclusive: samples whose innermost frame is there; inclusive: samples
//              with that row anywhere on their call path, each counted once.
// Percentages everywhere divide by the whole-program total (the root's inclusive).
// With work/span data each builder also joins the call sites to its rows
// (ViewNode::call_sites; callsite_columns.h): top-down at the row of each address
// node's outermost frame, shown at the top-most row of a path; bottom-up from the
// outermost contexts reaching a row; flat at the line rows of the sites' file:line.
#pragma once

#include "cilkprof/profile.pb.h"
#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {

ViewTree BuildTopDown(const profile::Profile& profile);
ViewTree BuildBottomUp(const ViewTree& top_down);
ViewTree BuildFlat(const profile::Profile& profile);

// The metrics of a profile, as views use them.
std::vector<MetricInfo> MetricsOf(const profile::Profile& profile);

}  // namespace cilkprof::views
