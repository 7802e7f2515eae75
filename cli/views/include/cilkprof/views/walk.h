// Walking a view in display order: the rows a renderer prints, sorted and pruned by
// the view options (filter.h), handed to a visitor one at a time so that output is
// streamed and nothing but the path being printed is held in memory.
//
// Order and pruning: children sort by the metric (inclusive or exclusive per
// options.sort_key), largest first, ties by name, file, line, module, edge and kind so
// that output is deterministic; rows below threshold_percent of the program total are
// hidden with their subtrees; depth counts levels below the view's root; with
// hot_path a row is expanded only while one of its children holds at least half of
// its value. The root is always shown.
//
// Call-site cells: on calling-context trees (top-down) a site is shown only at the
// top-most row carrying it on the path (deeper rows are recursive invocations of it);
// bottom-up and flat rows show their own sets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/row_tree.h"

namespace cilkprof::views {

enum class ViewKind { kTopDown, kBottomUp, kFlat };

const char* ViewName(ViewKind kind);  // "top-down", "bottom-up", "flat"

// What a view walks: a top-down or flat tree (focused or not), or the bottom-up view.
class ViewSource {
 public:
  ViewSource(const RowTree& tree) : tree_(&tree) {}      // NOLINT: implicit on purpose
  ViewSource(const BottomUp& view) : bottom_up_(&view) {}  // NOLINT
  const RowTree* tree() const { return tree_; }
  const BottomUp* bottom_up() const { return bottom_up_; }
  const TreeContext& context() const { return tree_ ? tree_->context() : bottom_up_->context(); }

 private:
  const RowTree* tree_ = nullptr;
  const BottomUp* bottom_up_ = nullptr;
};

// One row as a renderer sees it. Values hold every metric column
// (MetricColumns::size(): stored metrics, then derived ones).
struct RowView {
  RowKind kind = RowKind::kContext;
  const std::string* name = nullptr;
  const std::string* file = nullptr;
  uint32_t line = 0;
  const std::string* module = nullptr;
  Edge edge = Edge::kCall;
  bool inlined = false;
  const double* inclusive = nullptr;
  const double* exclusive = nullptr;
  std::optional<CallSiteCell> cell;
};

// The label of a row as text shows it (without indentation): "[spawn] f",
// "f (inline)", "?? [libm.so.6]", "prog.c:12" for flat lines.
std::string RowLabel(const RowView& row);

// What every row of a walk shares.
struct WalkInfo {
  const MetricColumns* metrics = nullptr;
  std::vector<double> program_total;  // every metric column
  const CallSiteTable* call_sites = nullptr;
};

class RowVisitor {
 public:
  virtual ~RowVisitor() = default;
  virtual void Begin(const WalkInfo& info) { (void)info; }
  // A row at `depth` (0 = the view's root); its children follow before Leave().
  virtual void Enter(const RowView& row, uint32_t depth) = 0;
  virtual void Leave(uint32_t depth) { (void)depth; }
  virtual void End() {}
};

void Walk(const ViewSource& source, const ViewOptions& options, RowVisitor& visitor);

}  // namespace cilkprof::views
