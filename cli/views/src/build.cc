// Folding the address-level tree of a profile into the top-down and flat trees (build.h).
#include "cilkprof/views/build.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/locks.h"

namespace cilkprof::views {
namespace {

// One source frame of a location, as a label.
struct FrameLabel {
  LabelId label = 0;
  bool inlined = false;
};

// A node's stored metric values, padded with zeros (a node's list may be shorter).
class NodeValues {
 public:
  NodeValues(const ProfileNodes& nodes, size_t metric_count) : nodes_(nodes), values_(metric_count, 0.0) {}
  const double* Exclusive(uint32_t node) {
    nodes_.Exclusive(node, values_.size(), values_.data());
    return values_.data();
  }

 private:
  const ProfileNodes& nodes_;
  std::vector<double> values_;
};

const std::string& ModulePath(const profile::Profile& profile, uint32_t module) {
  static const std::string kUnknown;
  if (module == 0 || module >= static_cast<uint32_t>(profile.modules_size())) return kUnknown;
  return profile.modules(static_cast<int>(module)).path();
}

// The source frames of a location, outermost first, or of the markers: "<partial
// unwind>", and "??" for a location out of range. Computed once per location.
class LocationFrames {
 public:
  LocationFrames(const profile::Profile& profile, InlineMode mode) : profile_(profile), fold_(mode == InlineMode::kFold) {
    by_location_.resize(static_cast<size_t>(std::max(profile.locations_size(), 1)));
  }

  // Frames of a valid location; nullptr entries stand for "??" (no frame recorded).
  const std::vector<const profile::SourceFrame*>& Frames(uint32_t location) {
    auto& frames = by_location_[location];
    if (!frames.empty()) return frames;
    const auto& source = profile_.locations(static_cast<int>(location)).frames();
    for (const auto& frame : source) {
      frames.push_back(&frame);
      if (fold_) break;  // the outermost frame: the function the others were inlined into
    }
    if (frames.empty()) frames.push_back(nullptr);  // the format promises a frame; degrade
    return frames;
  }

  bool Valid(uint32_t location) const {
    return location > 0 && location < static_cast<uint32_t>(profile_.locations_size());
  }

 private:
  const profile::Profile& profile_;
  bool fold_;
  std::vector<std::vector<const profile::SourceFrame*>> by_location_;
};

std::string_view FunctionName(const profile::SourceFrame* frame) {
  return frame == nullptr || frame->function().empty() ? std::string_view("??") : frame->function();
}

TreeContext ContextOf(const profile::Profile& profile) {
  TreeContext context;
  context.metrics = MetricColumns::Of(profile);
  context.call_sites = std::make_shared<const CallSiteTable>(CallSiteTableOf(profile));
  return context;
}

}  // namespace

RowTree BuildTopDown(const profile::Profile& profile, const BuildOptions& options) {
  return BuildTopDown(profile, ProfileNodes::Of(profile), options);
}

RowTree BuildFlat(const profile::Profile& profile, const BuildOptions& options) {
  return BuildFlat(profile, ProfileNodes::Of(profile), options);
}

RowTree BuildTopDown(const profile::Profile& profile, const ProfileNodes& nodes, const BuildOptions& options) {
  TreeContext context = ContextOf(profile);
  context.sites_topmost_only = true;
  RowTreeBuilder builder(std::move(context));
  LabelTable& labels = builder.labels();
  const size_t metric_count = builder.context().metrics.stored();
  const uint32_t node_count = nodes.size();
  if (node_count == 0) return builder.Finish();

  LocationFrames frames(profile, options.inline_mode);
  // Labels per location (outermost first), computed once.
  std::vector<std::vector<FrameLabel>> location_labels(static_cast<size_t>(std::max(profile.locations_size(), 1)));
  auto labels_of = [&](uint32_t location) -> const std::vector<FrameLabel>& {
    auto& out = location_labels[location];
    if (!out.empty()) return out;
    const std::string& module = ModulePath(profile, profile.locations(static_cast<int>(location)).module());
    for (const profile::SourceFrame* frame : frames.Frames(location)) {
      if (frame == nullptr) {
        out.push_back({labels.Intern(RowKind::kContext, "??", "", 0, module), false});
        continue;
      }
      const std::string& file = frame->function_file().empty() ? frame->file() : frame->function_file();
      out.push_back({labels.Intern(RowKind::kContext, FunctionName(frame), file, frame->function_line(), module),
                     frame->inlined()});
    }
    return out;
  };
  const FrameLabel partial{labels.Intern(RowKind::kPartialUnwind, kPartialUnwindName, "", 0, ""), false};
  const FrameLabel elided{labels.Intern(RowKind::kElidedFrames, kElidedFramesName, "", 0, ""), false};
  const FrameLabel unknown{labels.Intern(RowKind::kContext, "??", "", 0, ""), false};
  const bool fold_locks = options.lock_mode == LockMode::kFoldIntoCaller;
  // The "[lock NAME]" label of each lock location, computed once (0: not yet).
  std::vector<LabelId> lock_labels(location_labels.size(), 0);
  auto lock_label = [&](uint32_t location) {
    if (location >= lock_labels.size()) location = 0;
    LabelId& label = lock_labels[location];
    if (label != 0) return label;
    const LockIdentity lock = LockIdentityOf(profile, location);
    const std::string module =
        location == 0 ? "" : ModulePath(profile, profile.locations(static_cast<int>(location)).module());
    label = labels.Intern(RowKind::kLock, LockRowName(lock.name), lock.file, lock.line, module);
    return label;
  };

  // The call sites of each address node go to the row of its outermost frame (for a
  // spawned strand, the "[spawn] f" row).
  const NodeSites sites_of = JoinCallSitesToNodes(profile, nodes);
  NodeValues values(nodes, metric_count);
  // Profile node -> the row of its innermost frame.
  std::vector<uint32_t> row_of(node_count, 0);
  builder.AddExclusive(0, values.Exclusive(0));
  for (uint32_t i = 1; i < node_count; ++i) {
    uint32_t row = row_of[nodes.parent(i)];
    if (nodes.lock(i)) {
      // A leaf under the lock call, or its values given to that call's row.
      if (!fold_locks) row = builder.FindOrAdd(row, lock_label(nodes.location(i)), Edge::kCall, false);
      row_of[i] = row;
      builder.AddExclusive(row, values.Exclusive(i));
      continue;
    }
    const FrameLabel* first = nullptr;
    size_t count = 1;
    if (nodes.partial_unwind(i)) {
      first = &partial;
    } else if (nodes.elided_frames(i)) {
      first = &elided;
    } else if (frames.Valid(nodes.location(i))) {
      const auto& chain = labels_of(nodes.location(i));
      first = chain.data();
      count = chain.size();
    } else {
      first = &unknown;
    }
    for (size_t f = 0; f < count; ++f) {
      // The node's edge is how its outermost frame was entered; inlined frames
      // within one address are calls.
      row = builder.FindOrAdd(row, first[f].label, f == 0 ? nodes.edge(i) : Edge::kCall, first[f].inlined);
      if (f == 0) builder.AddSites(row, sites_of[i]);
    }
    row_of[i] = row;
    builder.AddExclusive(row, values.Exclusive(i));
  }
  return builder.Finish();
}

RowTree BuildFlat(const profile::Profile& profile, const ProfileNodes& nodes, const BuildOptions& options) {
  RowTreeBuilder builder(ContextOf(profile), LabelTable::kRoot, RowTreeBuilder::Inclusive::kAsAdded);
  LabelTable& labels = builder.labels();
  const size_t metric_count = builder.context().metrics.stored();
  const size_t node_count = nodes.size();
  if (node_count == 0) return builder.Finish();

  // Inclusive values and children of the address-level tree.
  NodeValues values(nodes, metric_count);
  std::vector<double> inclusive(node_count * metric_count);
  for (size_t i = 0; i < node_count; ++i) {
    std::copy_n(values.Exclusive(static_cast<uint32_t>(i)), metric_count, inclusive.data() + i * metric_count);
  }
  std::vector<uint32_t> first_child(node_count + 1, 0), children(node_count > 0 ? node_count - 1 : 0);
  for (size_t i = node_count; i-- > 1;) {
    const uint32_t parent = nodes.parent(static_cast<uint32_t>(i));
    for (size_t m = 0; m < metric_count; ++m) inclusive[parent * metric_count + m] += inclusive[i * metric_count + m];
    ++first_child[parent + 1];
  }
  for (size_t i = 0; i < node_count; ++i) first_child[i + 1] += first_child[i];
  {
    std::vector<uint32_t> next(first_child.begin(), first_child.end() - 1);
    for (size_t i = 1; i < node_count; ++i) children[next[nodes.parent(static_cast<uint32_t>(i))]++] = static_cast<uint32_t>(i);
  }
  builder.AddExclusive(0, values.Exclusive(0));
  builder.AddInclusive(0, &inclusive[0]);

  // The rows (module, file, function, line) of one frame.
  struct FrameRows {
    uint32_t rows[4];
  };
  auto rows_of_frame = [&](const profile::SourceFrame* frame, const std::string& module) {
    const std::string_view function = FunctionName(frame);
    const std::string_view line_file = frame != nullptr ? std::string_view(frame->file()) : std::string_view();
    const uint32_t function_line = frame != nullptr ? frame->function_line() : 0;
    const uint32_t line = frame != nullptr ? frame->line() : 0;
    const bool inlined = frame != nullptr && frame->inlined();
    FrameRows out{};
    out.rows[0] = builder.FindOrAdd(
        0, labels.Intern(RowKind::kModule, module.empty() ? "<unknown module>" : std::string_view(module), "", 0, module),
        Edge::kCall, false);
    out.rows[1] = builder.FindOrAdd(
        out.rows[0],
        labels.Intern(RowKind::kFile, line_file.empty() ? "<unknown file>" : line_file, line_file, 0, module),
        Edge::kCall, false);
    out.rows[2] = builder.FindOrAdd(out.rows[1],
                                    labels.Intern(RowKind::kFunction, function, line_file, function_line, module),
                                    Edge::kCall, inlined);
    out.rows[3] = builder.FindOrAdd(out.rows[2], labels.Intern(RowKind::kLine, function, line_file, line, module),
                                    Edge::kCall, inlined);
    return out;
  };

  LocationFrames frames(profile, options.inline_mode);
  // The rows of every frame of a location, outermost first; computed once per location.
  std::vector<std::vector<uint32_t>> location_rows(static_cast<size_t>(std::max(profile.locations_size(), 1)));
  std::vector<uint32_t> partial_rows, elided_rows, unknown_rows;
  const std::vector<uint32_t> root_rows;
  std::function<const std::vector<uint32_t>&(size_t)> rows_of_node = [&](size_t n) -> const std::vector<uint32_t>& {
    const auto node = static_cast<uint32_t>(n);
    // A lock node is not there: its rows are its parent's (the lock call's), which are
    // on the path already, so it adds to their exclusive values only.
    if (nodes.lock(node)) return node == 0 ? root_rows : rows_of_node(nodes.parent(node));
    if (node == 0) return root_rows;
    if (nodes.partial_unwind(node)) {
      if (partial_rows.empty()) {
        partial_rows.push_back(builder.FindOrAdd(0, labels.Intern(RowKind::kPartialUnwind, kPartialUnwindName, "", 0, ""),
                                                 Edge::kCall, false));
      }
      return partial_rows;
    }
    if (nodes.elided_frames(node)) {
      // One top-level row, like the partial-unwind marker's: no module, file or line.
      if (elided_rows.empty()) {
        elided_rows.push_back(builder.FindOrAdd(0, labels.Intern(RowKind::kElidedFrames, kElidedFramesName, "", 0, ""),
                                                Edge::kCall, false));
      }
      return elided_rows;
    }
    if (!frames.Valid(nodes.location(node))) {
      if (unknown_rows.empty()) {
        const FrameRows r = rows_of_frame(nullptr, "");
        unknown_rows.assign(std::begin(r.rows), std::end(r.rows));
      }
      return unknown_rows;
    }
    auto& rows = location_rows[nodes.location(node)];
    if (rows.empty()) {
      const std::string& module = ModulePath(profile, profile.locations(static_cast<int>(nodes.location(node))).module());
      for (const profile::SourceFrame* frame : frames.Frames(nodes.location(node))) {
        const FrameRows r = rows_of_frame(frame, module);
        rows.insert(rows.end(), std::begin(r.rows), std::end(r.rows));
      }
    }
    return rows;
  };

  // Call sites go to the line row of their file:line (the call's line, the spawn's
  // line; created when no sample fell on it), from the outermost address node they
  // joined on each path: a site under an enclosing node that already gave that line
  // its sites is a nested (recursive) invocation of code the outer one covers.
  const NodeSites sites_of = JoinCallSitesToNodes(profile, nodes);
  std::vector<int64_t> line_row_of_site(builder.context().call_sites->sites.size(), -2);  // -2: not yet known
  auto site_line_row = [&](uint32_t site) -> int64_t {
    if (site >= line_row_of_site.size()) return -1;
    if (line_row_of_site[site] != -2) return line_row_of_site[site];
    int64_t row = -1;
    if (const profile::SourceFrame* at = CallSiteUserFrame(profile, site)) {
      const uint32_t location = profile.workspan().call_sites(static_cast<int>(site)).location();
      row = rows_of_frame(at, ModulePath(profile, profile.locations(static_cast<int>(location)).module())).rows[3];
    }
    line_row_of_site[site] = row;
    return row;
  };

  // Depth-first over the address-level tree; active[r] counts the nodes on the path
  // that already gave row r their inclusive value (only the outermost counts).
  std::vector<uint32_t> active, site_active;
  struct Visit {
    uint32_t node;
    uint32_t next_child;
    std::vector<uint32_t> site_rows;
  };
  std::vector<Visit> stack;
  const uint32_t root_children_begin = first_child[0], root_children_end = first_child[1];
  auto enter = [&](uint32_t n) -> bool {
    const double* incl = inclusive.data() + size_t{n} * metric_count;
    if (std::all_of(incl, incl + metric_count, [](double v) { return v == 0.0; })) return false;
    // Rows first (they may be created here), then the counters sized for them.
    for (uint32_t site : sites_of[n]) site_line_row(site);
    const std::vector<uint32_t>& rows = rows_of_node(n);
    active.resize(builder.size(), 0);
    site_active.resize(builder.size(), 0);
    std::vector<uint32_t> site_rows;
    for (uint32_t site : sites_of[n]) {
      const int64_t row = site_line_row(site);
      if (row < 0) continue;
      const auto r = static_cast<uint32_t>(row);
      if (site_active[r] == 0) builder.AddSites(r, std::span<const uint32_t>(&site, 1));
      site_rows.push_back(r);
    }
    std::sort(site_rows.begin(), site_rows.end());
    site_rows.erase(std::unique(site_rows.begin(), site_rows.end()), site_rows.end());
    for (uint32_t r : site_rows) ++site_active[r];
    const double* exclusive = values.Exclusive(n);
    // The innermost frame's rows (the last four, or the one marker row) take the exclusive
    // value; a lock directly under the root gives it to the root.
    const size_t innermost = rows.size() >= 4 ? rows.size() - 4 : 0;
    for (size_t k = innermost; k < rows.size(); ++k) builder.AddExclusive(rows[k], exclusive);
    if (rows.empty()) builder.AddExclusive(0, exclusive);
    for (uint32_t r : rows) {
      if (active[r]++ == 0) builder.AddInclusive(r, incl);
    }
    stack.push_back({n, first_child[n], std::move(site_rows)});
    return true;
  };
  auto leave = [&]() {
    const Visit& visit = stack.back();
    for (uint32_t r : rows_of_node(visit.node)) --active[r];
    for (uint32_t r : visit.site_rows) --site_active[r];
    stack.pop_back();
  };
  for (uint32_t c = root_children_begin; c < root_children_end; ++c) {
    if (!enter(children[c])) continue;
    while (!stack.empty()) {
      Visit& top = stack.back();
      if (top.next_child < first_child[top.node + 1]) {
        enter(children[top.next_child++]);
      } else {
        leave();
      }
    }
  }
  return builder.Finish();
}

}  // namespace cilkprof::views
