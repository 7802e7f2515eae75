// The bottom-up view, expanded as it is shown (bottom_up.h).
#include "cilkprof/views/bottom_up.h"

#include <algorithm>

#include "cilkprof/views/filter.h"

namespace cilkprof::views {
namespace {

bool AnyNonZero(const double* values, size_t count) {
  return std::any_of(values, values + count, [](double v) { return v != 0.0; });
}

}  // namespace

BottomUp::BottomUp(const RowTree& top_down) : top_down_(&top_down) {
  const RowTree& tree = top_down;
  const size_t metric_count = tree.stored_metrics();
  // Contexts with a value, counting-sorted by label; pre-order within each label.
  std::vector<uint32_t> start(tree.labels().size() + 1, 0);
  for (uint32_t n = 1; n < tree.size(); ++n) {
    if (AnyNonZero(tree.inclusive(n), metric_count)) ++start[tree.label(n) + 1];
  }
  for (size_t l = 0; l + 1 < start.size(); ++l) {
    if (start[l + 1] > 0) function_runs_.push_back({static_cast<LabelId>(l), 0, 0});
    start[l + 1] += start[l];
  }
  by_function_.resize(start.back());
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (uint32_t n = 1; n < tree.size(); ++n) {
    if (AnyNonZero(tree.inclusive(n), metric_count)) by_function_[next[tree.label(n)]++] = n;
  }
  for (Run& run : function_runs_) {
    run.begin = start[run.label];
    run.end = start[run.label + 1];
  }
}

Status BottomUp::Focus(const std::string& name) {
  std::vector<LabelId> candidates;
  for (const Run& run : function_runs_) candidates.push_back(run.label);
  auto matched = MatchFunction(top_down_->labels(), candidates, name);
  if (!matched.ok()) return matched.status();
  focus_contexts_.clear();
  for (const Run& run : function_runs_) {
    if (std::find(matched->begin(), matched->end(), run.label) == matched->end()) continue;
    focus_contexts_.insert(focus_contexts_.end(), by_function_.begin() + run.begin, by_function_.begin() + run.end);
  }
  // Several functions of one name (one per module) merge into one row: in pre-order,
  // so that recursion through any of them is counted once.
  std::sort(focus_contexts_.begin(), focus_contexts_.end());
  focus_label_ = focus_contexts_.empty() ? matched->front() : top_down_->label(focus_contexts_.front());
  return Status::Ok();
}

std::vector<BottomUp::Row> BottomUp::Functions() const {
  Walk walk(*this);
  walk.entries_.clear();
  for (uint32_t context : by_function_) walk.entries_.push_back({context, context});
  std::vector<Row> rows;
  for (const Run& run : function_runs_) rows.push_back(walk.MakeRow(run.label, Edge::kCall, run.begin, run.end));
  return rows;
}

BottomUp::Walk::Walk(const BottomUp& view) : view_(view), tree_(*view.top_down_) {
  const std::vector<uint32_t>& contexts = view.focused() ? view.focus_contexts_ : view.by_function_;
  entries_.reserve(contexts.size());
  for (uint32_t context : contexts) entries_.push_back({context, context});
}

BottomUp::Row BottomUp::Walk::Root() {
  if (view_.focused()) return MakeRow(view_.focus_label_, Edge::kCall, 0, static_cast<uint32_t>(entries_.size()));
  Row root;
  root.label = LabelTable::kRoot;
  root.inclusive = tree_.context().program_total;
  root.inclusive.resize(tree_.stored_metrics(), 0.0);
  root.exclusive.assign(tree_.exclusive(0), tree_.exclusive(0) + tree_.stored_metrics());
  root.begin = 0;
  root.end = static_cast<uint32_t>(entries_.size());
  return root;
}

std::vector<BottomUp::Row> BottomUp::Walk::Children(const Row& row) {
  std::vector<Row> children;
  if (!view_.focused() && row.label == LabelTable::kRoot) {  // the program root: the functions
    for (const Run& run : view_.function_runs_) children.push_back(MakeRow(run.label, Edge::kCall, run.begin, run.end));
    return children;
  }
  // The callers: each entry's caller moves one level up; entries whose caller is the
  // outermost frame (under the program root) have none and go last.
  constexpr uint64_t kNoCaller = UINT64_MAX;
  auto key = [&](const Entry& e) -> uint64_t {
    const uint32_t up = tree_.parent(e.caller);
    if (up == 0) return kNoCaller;
    return uint64_t{tree_.label(up)} << 2 | static_cast<uint64_t>(tree_.edge(e.caller));
  };
  const auto first = entries_.begin() + row.begin, last = entries_.begin() + row.end;
  std::stable_sort(first, last, [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
  uint32_t i = row.begin;
  while (i < row.end) {
    const uint64_t k = key(entries_[i]);
    if (k == kNoCaller) break;
    uint32_t j = i;
    // The row's edge is how the function below was entered from this caller.
    const Edge edge = tree_.edge(entries_[i].caller);
    for (; j < row.end && key(entries_[j]) == k; ++j) {}
    for (uint32_t e = i; e < j; ++e) entries_[e].caller = tree_.parent(entries_[e].caller);
    children.push_back(MakeRow(static_cast<LabelId>(k >> 2), edge, i, j));
    i = j;
  }
  return children;
}

BottomUp::Row BottomUp::Walk::MakeRow(LabelId label, Edge edge, uint32_t begin, uint32_t end) {
  const size_t metric_count = tree_.stored_metrics();
  Row row;
  row.label = label;
  row.edge = edge;
  row.begin = begin;
  row.end = end;
  row.inclusive.assign(metric_count, 0.0);
  row.exclusive.assign(metric_count, 0.0);
  row.inlined = begin < end;
  uint32_t kept_end = 0;  // subtree end of the last outermost context kept
  for (uint32_t i = begin; i < end; ++i) {
    const Entry& e = entries_[i];
    const double* exclusive = tree_.exclusive(e.context);
    for (size_t m = 0; m < metric_count; ++m) row.exclusive[m] += exclusive[m];
    row.inlined = row.inlined && tree_.inlined(e.caller);
    if (e.context < kept_end) continue;  // inside an outer context of this row: recursion
    kept_end = tree_.end(e.context);
    const double* inclusive = tree_.inclusive(e.context);
    for (size_t m = 0; m < metric_count; ++m) row.inclusive[m] += inclusive[m];
    const auto sites = tree_.sites(e.context);
    row.sites.insert(row.sites.end(), sites.begin(), sites.end());
  }
  std::sort(row.sites.begin(), row.sites.end());
  row.sites.erase(std::unique(row.sites.begin(), row.sites.end()), row.sites.end());
  return row;
}

}  // namespace cilkprof::views
