// Walking a view in display order (walk.h).
#include "cilkprof/views/walk.h"

#include <algorithm>
#include <tuple>

namespace cilkprof::views {
namespace {

// A row the walk may show: from a RowTree (tree_row) or a bottom-up row held by the
// frame that expanded it (bottom_row indexes that frame's rows).
struct Candidate {
  LabelId label = 0;
  Edge edge = Edge::kCall;
  bool inlined = false;
  const double* inclusive = nullptr;  // stored metrics
  const double* exclusive = nullptr;
  std::span<const uint32_t> sites;
  uint32_t tree_row = 0;
  size_t bottom_row = 0;
  double sort_value = 0;
  bool hot = true;
};

struct Frame {
  Candidate row;
  uint32_t depth = 0;
  bool expanded = false;
  std::vector<Candidate> children;     // sorted and filtered, once expanded
  size_t next = 0;                     // the next child to show
  std::vector<BottomUp::Row> storage;  // the bottom-up rows the children point into
  const BottomUp::Row* bottom_up = nullptr;  // this row's own, for expanding it
};

class Walker {
 public:
  Walker(const ViewSource& source, const ViewOptions& options, RowVisitor& visitor)
      : source_(source),
        options_(options),
        visitor_(visitor),
        context_(source.context()),
        metrics_(context_.metrics),
        labels_(source.tree() ? source.tree()->labels() : source.bottom_up()->top_down().labels()),
        inclusive_(metrics_.size()),
        exclusive_(metrics_.size()),
        scratch_(metrics_.size()),
        topmost_only_(context_.sites_topmost_only && source.tree() != nullptr) {
    if (context_.call_sites) active_.assign(context_.call_sites->sites.size(), 0);
  }

  void Run() {
    WalkInfo info;
    info.metrics = &metrics_;
    info.program_total.assign(metrics_.size(), 0.0);
    std::vector<double> stored = context_.program_total;
    stored.resize(metrics_.stored(), 0.0);
    if (metrics_.size() > 0) metrics_.Expand(stored.data(), info.program_total.data());
    info.call_sites = context_.call_sites.get();
    const size_t m = options_.metric;
    const double total = m < info.program_total.size() ? info.program_total[m] : 0.0;
    // A row exactly at the threshold stays, even when PCT/100 * total rounds up a little.
    threshold_ = options_.threshold_percent / 100.0 * total * (1 - 1e-9);
    visitor_.Begin(info);

    std::vector<Frame> stack;
    Frame root;
    std::optional<BottomUp::Walk> expansion;
    BottomUp::Row bottom_root;
    if (const RowTree* tree = source_.tree()) {
      root.row = FromTree(*tree, 0);
    } else {
      expansion.emplace(source_.bottom_up()->Expand());
      bottom_root = expansion->Root();
      root.row = FromBottomUp(bottom_root);
      root.bottom_up = &bottom_root;
    }
    const bool is_program_root = labels_[root.row.label].kind == RowKind::kRoot;
    root.row.sort_value = is_program_root ? total : SortValue(root.row);
    Enter(root.row, 0);
    stack.push_back(std::move(root));
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (!top.expanded) {
        top.expanded = true;
        Expand(top, expansion ? &*expansion : nullptr);
      }
      if (top.next < top.children.size()) {
        Frame child;
        child.row = top.children[top.next++];
        child.depth = top.depth + 1;
        if (!top.storage.empty()) child.bottom_up = &top.storage[child.row.bottom_row];
        Enter(child.row, child.depth);
        stack.push_back(std::move(child));  // `top` may dangle from here
        continue;
      }
      visitor_.Leave(top.depth);
      if (topmost_only_) {
        for (uint32_t s : top.row.sites) {
          if (s < active_.size()) --active_[s];
        }
      }
      stack.pop_back();
    }
    visitor_.End();
  }

 private:
  Candidate FromTree(const RowTree& tree, uint32_t n) const {
    Candidate c;
    c.label = tree.label(n);
    c.edge = tree.edge(n);
    c.inlined = tree.inlined(n);
    c.inclusive = tree.inclusive(n);
    c.exclusive = tree.exclusive(n);
    c.sites = tree.sites(n);
    c.tree_row = n;
    return c;
  }

  static Candidate FromBottomUp(const BottomUp::Row& row) {
    Candidate c;
    c.label = row.label;
    c.edge = row.edge;
    c.inlined = row.inlined;
    c.inclusive = row.inclusive.data();
    c.exclusive = row.exclusive.data();
    c.sites = row.sites;
    return c;
  }

  double SortValue(const Candidate& c) {
    const double* stored = options_.sort_key == SortKey::kInclusive ? c.inclusive : c.exclusive;
    const size_t m = options_.metric;
    if (m < metrics_.stored()) return stored[m];
    if (m >= metrics_.size()) return 0.0;
    metrics_.Expand(stored, scratch_.data());
    return scratch_[m];
  }

  // Sorted, filtered children of a frame's row, unless depth or the hot path stop it.
  void Expand(Frame& frame, BottomUp::Walk* expansion) {
    if (options_.depth && frame.depth >= *options_.depth) return;
    if (options_.hot_path && !frame.row.hot) return;
    std::vector<Candidate> candidates;
    if (const RowTree* tree = source_.tree()) {
      for (uint32_t c = tree->FirstChild(frame.row.tree_row); c != RowTree::kNone;
           c = tree->NextSibling(frame.row.tree_row, c)) {
        candidates.push_back(FromTree(*tree, c));
      }
    } else {
      frame.storage = expansion->Children(*frame.bottom_up);
      for (size_t i = 0; i < frame.storage.size(); ++i) {
        candidates.push_back(FromBottomUp(frame.storage[i]));
        candidates.back().bottom_row = i;
      }
    }
    for (Candidate& c : candidates) {
      c.sort_value = SortValue(c);
      c.hot = c.sort_value > 0 && c.sort_value >= 0.5 * frame.row.sort_value;
    }
    std::erase_if(candidates, [&](const Candidate& c) { return c.sort_value < threshold_; });
    std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
      if (a.sort_value != b.sort_value) return a.sort_value > b.sort_value;
      const Label& x = labels_[a.label];
      const Label& y = labels_[b.label];
      const auto& s = labels_.strings();
      return std::tie(s[x.name], s[x.file], x.line, s[x.module], a.edge, x.kind) <
             std::tie(s[y.name], s[y.file], y.line, s[y.module], b.edge, y.kind);
    });
    frame.children = std::move(candidates);
  }

  void Enter(const Candidate& c, uint32_t depth) {
    const Label& label = labels_[c.label];
    RowView row;
    row.kind = label.kind;
    row.name = &labels_.strings()[label.name];
    row.file = &labels_.strings()[label.file];
    row.line = label.line;
    row.module = &labels_.strings()[label.module];
    row.edge = c.edge;
    row.inlined = c.inlined;
    if (metrics_.size() > 0) {
      metrics_.Expand(c.inclusive, inclusive_.data());
      metrics_.Expand(c.exclusive, exclusive_.data());
    }
    row.inclusive = inclusive_.data();
    row.exclusive = exclusive_.data();
    if (context_.call_sites && context_.call_sites->present && !c.sites.empty()) {
      if (topmost_only_) {
        shown_.clear();
        for (uint32_t s : c.sites) {
          if (s < active_.size() && active_[s] == 0) shown_.push_back(s);
        }
        row.cell = CellOf(*context_.call_sites, shown_);
        for (uint32_t s : c.sites) {
          if (s < active_.size()) ++active_[s];
        }
      } else {
        row.cell = CellOf(*context_.call_sites, c.sites);
      }
    }
    visitor_.Enter(row, depth);
  }

  const ViewSource& source_;
  const ViewOptions& options_;
  RowVisitor& visitor_;
  const TreeContext& context_;
  const MetricColumns& metrics_;
  const LabelTable& labels_;
  std::vector<double> inclusive_, exclusive_, scratch_;
  bool topmost_only_;
  double threshold_ = 0;
  std::vector<uint32_t> active_;  // top-most only: ancestors on the path carrying each site
  std::vector<uint32_t> shown_;
};

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
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

std::string RowLabel(const RowView& row) {
  static const std::string kEmpty;
  const std::string& name = row.name ? *row.name : kEmpty;
  const std::string& file = row.file ? *row.file : kEmpty;
  const std::string& module = row.module ? *row.module : kEmpty;
  switch (row.kind) {
    case RowKind::kRoot:
    case RowKind::kPartialUnwind:
    case RowKind::kElidedFrames:
    case RowKind::kLock:
    case RowKind::kModule:
    case RowKind::kFile:
      return name;
    case RowKind::kLine:
      return (file.empty() ? std::string("??") : Basename(file)) + ":" +
             (row.line ? std::to_string(row.line) : std::string("?"));
    case RowKind::kContext:
    case RowKind::kFunction:
      break;
  }
  std::string label;
  if (const char* marker = EdgeMarker(row.edge)) label = std::string(marker) + " ";
  label += name;
  if (name == "??") label += " [" + (module.empty() ? std::string("unknown module") : Basename(module)) + "]";
  if (row.inlined) label += " (inline)";
  return label;
}

void Walk(const ViewSource& source, const ViewOptions& options, RowVisitor& visitor) {
  Walker(source, options, visitor).Run();
}

}  // namespace cilkprof::views
