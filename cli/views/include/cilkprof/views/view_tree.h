// The tree every view renders: rows with a label, a source location, an edge kind and
// an inclusive and exclusive value per metric of the profile.
//
// Top-down, bottom-up and flat views all build a ViewTree; filters (focus, depth,
// threshold, hot path) and renderers (text, JSON, CSV) work on any of them. Nodes live
// in one vector; node 0 is the root and every parent precedes its children.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cilkprof::views {

enum class Edge { kCall, kSpawn };

// What a row stands for. The key under which siblings merge depends on it.
enum class RowKind {
  kRoot,            // "<program root>": whole-program totals
  kContext,         // a function in a calling context (top-down, bottom-up)
  kPartialUnwind,   // "<partial unwind>": the unwind stopped; children are what it got
  kModule,          // flat view: a load module
  kFile,            // flat view: a source file
  kFunction,        // flat view: a function within a file
  kLine,            // flat view: a line of a function
};

inline constexpr const char* kProgramRootName = "<program root>";
inline constexpr const char* kPartialUnwindName = "<partial unwind>";

struct ViewNode {
  RowKind kind = RowKind::kContext;
  std::string name;    // the function (the file for kFile, the module path for kModule)
  std::string file;    // where the function is defined; for kLine/kFile the line's file
  uint32_t line = 0;   // the function's first line; for kLine the line itself; 0 unknown
  std::string module;  // load module path; "" when unknown
  Edge edge = Edge::kCall;
  bool inlined = false;            // every address folded into it was inlined code
  std::vector<double> inclusive;   // indexed like ViewTree::metrics
  std::vector<double> exclusive;
  // Call sites joined to this row (indices into ViewTree::call_sites.sites, sorted,
  // distinct); see callsite_columns.h. Empty without work/span data.
  std::vector<uint32_t> call_sites;
  uint32_t parent = 0;
  std::vector<uint32_t> children;
};

struct MetricInfo {
  std::string name;
  std::string unit;  // "ns", "count", ...
  std::string description;
};

// The work/span figures of one call site (Profile.workspan.call_sites[i]) that the
// views' call-site columns add up.
struct CallSiteFigures {
  double work_on_work = 0;
  double span_on_work = 0;
  double span_on_span = 0;
  uint64_t count = 0;  // invocations, recursive ones included
};

// The call-site table a view's rows point into (callsite_columns.h).
struct CallSiteTable {
  bool present = false;       // the profile has work/span data: the views show the columns
  std::string unit;           // the work/span clock's unit: "ns" or "units"
  double program_span = 0;    // T-infinity: `span %` divides span-on-span by it
  // Top-down: a site is shown only at the top-most row carrying it on a path (a
  // deeper row of the same site is a recursive invocation, already in the totals).
  // Bottom-up and flat build their sets outermost-first themselves: every row shows its own.
  bool topmost_only = false;
  std::vector<CallSiteFigures> sites;  // indexed like Profile.workspan.call_sites
};

struct ViewTree {
  std::vector<MetricInfo> metrics;
  CallSiteTable call_sites;           // work/span columns; !present without work/span data
  std::vector<ViewNode> nodes;        // nodes[0] is the root
  std::vector<double> program_total;  // whole-program totals (percentages divide by these)

  // Adds a node (values zeroed) under `parent` and returns its index.
  uint32_t AddChild(uint32_t parent, ViewNode node);
  // The child of `parent` with the same merge key as `probe`, created if missing.
  uint32_t FindOrAddChild(uint32_t parent, const ViewNode& probe);
  // The same for a row like `source` entered by `edge`, without call sites (the
  // bottom-up builder's caller rows): copies `source` only when the row is new.
  uint32_t FindOrAddChildLike(uint32_t parent, const ViewNode& source, Edge edge);
  // Recomputes inclusive = exclusive + sum of children, bottom-up.
  void ComputeInclusiveFromExclusive();
  // A tree holding only the root with the metrics and totals of `like`.
  static ViewTree EmptyLike(const ViewTree& like);

 private:
  // Finds the child of `parent` with the merge key of (`probe`, `edge`); none: UINT32_MAX.
  uint32_t FindChild(uint32_t parent, const ViewNode& probe, Edge edge) const;
  // hash of (parent, merge key) -> children with that hash, so that merging stays
  // linear in wide trees without building a key string per lookup.
  std::unordered_multimap<uint64_t, uint32_t> child_index_;
};

// Two sibling rows merge when these agree: (kind, function, module, edge), and for
// flat rows the file and line as well.
bool SameMergeKey(const ViewNode& a, const ViewNode& b);

}  // namespace cilkprof::views
