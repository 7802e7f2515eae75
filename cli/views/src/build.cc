// Folding the address-level tree of a profile into the three views (see build.h).
#include "cilkprof/views/build.h"

#include <algorithm>
#include <utility>

#include "cilkprof/views/callsite_columns.h"
#include "depth_first.h"

namespace cilkprof::views {
namespace {

using internal::ChildrenOf;
using internal::DepthFirst;

// One source frame of a profile node, with its load module resolved.
struct Frame {
  RowKind kind = RowKind::kContext;  // kContext or kPartialUnwind
  std::string function;
  std::string file;           // file of `line`
  uint32_t line = 0;
  std::string function_file;  // where the function is defined
  uint32_t function_line = 0;
  std::string module;
  bool inlined = false;
};

const std::string& ModulePath(const profile::Profile& profile, uint32_t module) {
  static const std::string kUnknown;
  if (module == 0 || module >= static_cast<uint32_t>(profile.modules_size())) return kUnknown;
  return profile.modules(static_cast<int>(module)).path();
}

// The frames of profile node `index`, outermost first. Never empty.
std::vector<Frame> Expand(const profile::Profile& profile, int index) {
  const auto& node = profile.nodes(index);
  std::vector<Frame> frames;
  if (node.kind() == wire::FRAME_PARTIAL_UNWIND) {
    Frame marker;
    marker.kind = RowKind::kPartialUnwind;
    marker.function = kPartialUnwindName;
    frames.push_back(std::move(marker));
    return frames;
  }
  const bool valid_location =
      node.location() > 0 && node.location() < static_cast<uint32_t>(profile.locations_size());
  if (valid_location) {
    const auto& location = profile.locations(static_cast<int>(node.location()));
    const std::string& module = ModulePath(profile, location.module());
    for (const auto& source : location.frames()) {
      Frame frame;
      frame.function = source.function().empty() ? "??" : source.function();
      frame.file = source.file();
      frame.line = source.line();
      frame.function_file = source.function_file();
      frame.function_line = source.function_line();
      frame.module = module;
      frame.inlined = source.inlined();
      frames.push_back(std::move(frame));
    }
    if (frames.empty()) {  // the format promises one frame; degrade, do not fail
      Frame unknown;
      unknown.function = "??";
      unknown.module = module;
      frames.push_back(std::move(unknown));
    }
    return frames;
  }
  Frame unknown;
  unknown.function = "??";
  frames.push_back(std::move(unknown));
  return frames;
}

void AddValues(std::vector<double>& to, const std::vector<double>& values) {
  for (size_t m = 0; m < to.size() && m < values.size(); ++m) to[m] += values[m];
}

std::vector<double> ExclusiveOf(const profile::Node& node, size_t metric_count) {
  std::vector<double> values(metric_count, 0.0);
  for (size_t m = 0; m < metric_count && m < static_cast<size_t>(node.exclusive_size()); ++m) {
    values[m] = node.exclusive(static_cast<int>(m));
  }
  return values;
}

bool AnyNonZero(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double v) { return v != 0.0; });
}

ViewTree EmptyTree(const profile::Profile& profile) {
  ViewTree shape;
  shape.metrics = MetricsOf(profile);
  return ViewTree::EmptyLike(shape);
}

// Parent index of profile node i, clamped so a malformed file cannot loop.
uint32_t ParentOf(const profile::Profile& profile, int i) {
  const uint32_t parent = profile.nodes(i).parent();
  return parent < static_cast<uint32_t>(i) ? parent : 0;
}

ViewNode ContextRow(const Frame& frame, Edge edge) {
  ViewNode row;
  row.kind = frame.kind;
  row.name = frame.function;
  row.file = frame.function_file.empty() ? frame.file : frame.function_file;
  row.line = frame.function_line;
  row.module = frame.module;
  row.edge = edge;
  row.inlined = frame.inlined;
  return row;
}

Edge EdgeOf(const profile::Node& node) {
  return node.edge() == wire::EDGE_SPAWN ? Edge::kSpawn : Edge::kCall;
}

}  // namespace

std::vector<MetricInfo> MetricsOf(const profile::Profile& profile) {
  std::vector<MetricInfo> metrics;
  for (const auto& descriptor : profile.metrics()) {
    metrics.push_back({descriptor.name(), descriptor.unit(), descriptor.description()});
  }
  return metrics;
}

ViewTree BuildTopDown(const profile::Profile& profile) {
  ViewTree tree = EmptyTree(profile);
  tree.call_sites = CallSiteTableOf(profile);
  tree.call_sites.topmost_only = true;
  const size_t metric_count = tree.metrics.size();
  if (profile.nodes_size() == 0) {
    tree.program_total.assign(metric_count, 0.0);
    return tree;
  }
  // The call sites of each address node go to the row of its outermost frame (for a
  // spawned strand, the "[spawn] f" row).
  const std::vector<std::vector<uint32_t>> sites_of = JoinCallSitesToNodes(profile);
  // Profile node -> the view row of its innermost frame.
  std::vector<uint32_t> row_of(static_cast<size_t>(profile.nodes_size()), 0);
  AddValues(tree.nodes[0].exclusive, ExclusiveOf(profile.nodes(0), metric_count));
  for (int i = 1; i < profile.nodes_size(); ++i) {
    const auto& node = profile.nodes(i);
    uint32_t row = row_of[ParentOf(profile, i)];
    const std::vector<Frame> frames = Expand(profile, i);
    for (size_t f = 0; f < frames.size(); ++f) {
      // The node's edge is how its outermost frame was entered; inlined frames
      // within one address are calls.
      const Edge edge = f == 0 ? EdgeOf(node) : Edge::kCall;
      row = tree.FindOrAddChild(row, ContextRow(frames[f], edge));
      if (f == 0 && static_cast<size_t>(i) < sites_of.size()) {
        UniteCallSites(&tree.nodes[row].call_sites, sites_of[static_cast<size_t>(i)]);
      }
    }
    row_of[static_cast<size_t>(i)] = row;
    AddValues(tree.nodes[row].exclusive, ExclusiveOf(node, metric_count));
  }
  tree.ComputeInclusiveFromExclusive();
  tree.program_total = tree.nodes[0].inclusive;
  return tree;
}

ViewTree BuildBottomUp(const ViewTree& top_down) {
  ViewTree tree = ViewTree::EmptyLike(top_down);
  // Rows take the call sites of the outermost contexts that reach them (below), as
  // they take inclusive values: each row shows its own set.
  tree.call_sites.topmost_only = false;
  tree.nodes[0].inclusive = top_down.program_total;
  tree.nodes[0].exclusive = top_down.nodes[0].exclusive;
  // active[b]: how many contexts on the current top-down path already gave their
  // inclusive value to bottom-up row b; only the outermost one counts (recursion).
  std::vector<uint32_t> active;
  std::vector<std::vector<uint32_t>> rows_of_path;  // bottom-up rows per entered node
  DepthFirst(
      ChildrenOf{top_down}, 0,
      [&](uint32_t n) {
        if (n == 0) return true;
        const ViewNode& context = top_down.nodes[n];
        if (!AnyNonZero(context.inclusive)) return false;
        std::vector<uint32_t> rows;
        // A function's own row: how it was entered is below; its call sites are
        // added below, outermost contexts only.
        uint32_t row = tree.FindOrAddChildLike(0, context, Edge::kCall);
        rows.push_back(row);
        // Its callers, innermost first; each caller row carries the edge by which it
        // entered the row above it ("[spawn] g" under f: g spawned f), and shows the
        // function's sites, not its own.
        for (uint32_t below = n, caller = context.parent; caller != 0;
             below = caller, caller = top_down.nodes[caller].parent) {
          row = tree.FindOrAddChildLike(row, top_down.nodes[caller], top_down.nodes[below].edge);
          rows.push_back(row);
        }
        if (active.size() < tree.nodes.size()) active.resize(tree.nodes.size(), 0);
        for (uint32_t r : rows) {
          AddValues(tree.nodes[r].exclusive, context.exclusive);
          if (active[r] == 0) {
            AddValues(tree.nodes[r].inclusive, context.inclusive);
            // A recursive context's sites are invocations inside the outer one's.
            UniteCallSites(&tree.nodes[r].call_sites, context.call_sites);
          }
        }
        for (uint32_t r : rows) ++active[r];
        rows_of_path.push_back(std::move(rows));
        return true;
      },
      [&](uint32_t n) {
        if (n == 0) return;
        for (uint32_t r : rows_of_path.back()) --active[r];
        rows_of_path.pop_back();
      });
  return tree;
}

ViewTree BuildFlat(const profile::Profile& profile) {
  ViewTree tree = EmptyTree(profile);
  tree.call_sites = CallSiteTableOf(profile);
  const size_t metric_count = tree.metrics.size();
  const auto node_count = static_cast<size_t>(profile.nodes_size());
  if (node_count == 0) {
    tree.program_total.assign(metric_count, 0.0);
    return tree;
  }
  // Inclusive values of the address-level tree.
  std::vector<std::vector<double>> inclusive(node_count);
  std::vector<std::vector<uint32_t>> children(node_count);
  for (size_t i = 0; i < node_count; ++i) inclusive[i] = ExclusiveOf(profile.nodes(static_cast<int>(i)), metric_count);
  for (size_t i = node_count; i-- > 1;) {
    const uint32_t parent = ParentOf(profile, static_cast<int>(i));
    AddValues(inclusive[parent], inclusive[i]);
    children[parent].push_back(static_cast<uint32_t>(i));
  }
  for (auto& kids : children) std::reverse(kids.begin(), kids.end());
  tree.program_total = inclusive[0];
  tree.nodes[0].inclusive = inclusive[0];
  tree.nodes[0].exclusive = ExclusiveOf(profile.nodes(0), metric_count);

  // The rows (module, file, function, line) one frame belongs to.
  auto rows_of_frame = [&](const Frame& frame) {
    std::vector<uint32_t> rows;
    if (frame.kind == RowKind::kPartialUnwind) {
      ViewNode marker;
      marker.kind = RowKind::kPartialUnwind;
      marker.name = kPartialUnwindName;
      rows.push_back(tree.FindOrAddChild(0, marker));
      return rows;
    }
    ViewNode module_row;
    module_row.kind = RowKind::kModule;
    module_row.name = frame.module.empty() ? "<unknown module>" : frame.module;
    module_row.module = frame.module;
    rows.push_back(tree.FindOrAddChild(0, module_row));
    ViewNode file_row;
    file_row.kind = RowKind::kFile;
    file_row.name = frame.file.empty() ? "<unknown file>" : frame.file;
    file_row.file = frame.file;
    file_row.module = frame.module;
    rows.push_back(tree.FindOrAddChild(rows.back(), file_row));
    ViewNode function_row;
    function_row.kind = RowKind::kFunction;
    function_row.name = frame.function;
    function_row.file = frame.file;
    function_row.line = frame.function_line;
    function_row.module = frame.module;
    function_row.inlined = frame.inlined;
    rows.push_back(tree.FindOrAddChild(rows.back(), function_row));
    ViewNode line_row = function_row;
    line_row.kind = RowKind::kLine;
    line_row.line = frame.line;
    rows.push_back(tree.FindOrAddChild(rows.back(), line_row));
    return rows;
  };

  // Call sites go to the line row of their file:line (the scope's line, the spawn's
  // line; created when no sample fell on it), from the outermost address node they
  // joined on each path: a site under an enclosing node that already gave that line
  // its sites is a nested (recursive) invocation of code the outer one covers.
  const std::vector<std::vector<uint32_t>> sites_of = JoinCallSitesToNodes(profile);
  std::vector<int64_t> line_row_of_site(tree.call_sites.sites.size(), -2);  // -2: not yet known
  auto site_line_row = [&](uint32_t site) -> int64_t {
    if (site >= line_row_of_site.size()) return -1;
    if (line_row_of_site[site] != -2) return line_row_of_site[site];
    int64_t row = -1;
    if (const profile::SourceFrame* at = CallSiteUserFrame(profile, site)) {
      const uint32_t location = profile.workspan().call_sites(static_cast<int>(site)).location();
      Frame frame;
      frame.function = at->function().empty() ? "??" : at->function();
      frame.file = at->file();
      frame.line = at->line();
      frame.function_file = at->function_file();
      frame.function_line = at->function_line();
      frame.module = ModulePath(profile, profile.locations(static_cast<int>(location)).module());
      frame.inlined = at->inlined();
      row = rows_of_frame(frame).back();
    }
    line_row_of_site[site] = row;
    return row;
  };

  std::vector<uint32_t> active;
  std::vector<uint32_t> site_active;  // per row: enclosing nodes on the path that gave it sites
  std::vector<std::vector<uint32_t>> rows_of_path;
  std::vector<std::vector<uint32_t>> site_rows_of_path;
  DepthFirst(
      children, 0,
      [&](uint32_t n) {
        if (n == 0) return true;
        if (!AnyNonZero(inclusive[n])) return false;
        std::vector<uint32_t> site_rows;
        for (uint32_t site : sites_of[n]) {
          const int64_t row = site_line_row(site);
          if (row < 0) continue;
          const auto r = static_cast<uint32_t>(row);
          if (site_active.size() < tree.nodes.size()) site_active.resize(tree.nodes.size(), 0);
          if (site_active[r] == 0) UniteCallSites(&tree.nodes[r].call_sites, {site});
          site_rows.push_back(r);
        }
        std::sort(site_rows.begin(), site_rows.end());
        site_rows.erase(std::unique(site_rows.begin(), site_rows.end()), site_rows.end());
        for (uint32_t r : site_rows) ++site_active[r];
        site_rows_of_path.push_back(std::move(site_rows));
        const std::vector<Frame> frames = Expand(profile, static_cast<int>(n));
        std::vector<uint32_t> rows;
        std::vector<uint32_t> innermost;
        for (const Frame& frame : frames) {
          innermost = rows_of_frame(frame);
          rows.insert(rows.end(), innermost.begin(), innermost.end());
        }
        if (active.size() < tree.nodes.size()) active.resize(tree.nodes.size(), 0);
        const std::vector<double> exclusive = ExclusiveOf(profile.nodes(static_cast<int>(n)), metric_count);
        for (uint32_t r : innermost) AddValues(tree.nodes[r].exclusive, exclusive);
        for (uint32_t r : rows) {
          if (active[r] == 0) AddValues(tree.nodes[r].inclusive, inclusive[n]);
          ++active[r];
        }
        rows_of_path.push_back(std::move(rows));
        return true;
      },
      [&](uint32_t n) {
        if (n == 0) return;
        for (uint32_t r : rows_of_path.back()) --active[r];
        rows_of_path.pop_back();
        for (uint32_t r : site_rows_of_path.back()) --site_active[r];
        site_rows_of_path.pop_back();
      });
  return tree;
}

}  // namespace cilkprof::views
