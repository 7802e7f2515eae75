// The bottom-up view (hpcviewer's callers view), expanded from the top-down tree only
// as far as it is shown.
//
// A bottom-up row is a function followed by a chain of callers, f < c1 < ... < ck; the
// contexts that reach it are the top-down rows of f whose k nearest ancestors are
// c1..ck (each caller row carries the edge by which it entered the row above it:
// "[spawn] g" under f means g spawned f). Values:
//   exclusive  the sum of those contexts' exclusive values;
//   inclusive  the sum of their inclusive values over the outermost ones only (a
//              context under another of the same row is a recursive call whose
//              samples the outer one already holds), so recursion is counted once;
//   call sites the union of the outermost contexts' sites (each row its own set).
//
// Expansion works on one array of (context, caller) entries, one per top-down context:
// a row's entries are a contiguous slice, sorted by context in pre-order, and its
// children are the runs of that slice after a stable sort by (caller's label, edge),
// each entry's caller moved one level up. "Outermost" is then one comparison per entry
// (a context is inside the last one kept when it precedes that one's subtree end). A
// row costs time proportional to its contexts, so a walk costs the rows it shows times
// their contexts: at worst O(contexts x depth), never the whole caller tree unless it
// is printed; memory is the array plus the rows on the walk's path.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/views/row_tree.h"

namespace cilkprof::views {

class BottomUp {
 public:
  // `top_down` must outlive this object and the walks over it.
  explicit BottomUp(const RowTree& top_down);

  const RowTree& top_down() const { return *top_down_; }
  const TreeContext& context() const { return top_down_->context(); }

  // A row: a function (or a caller in a chain) with its values and the slice of a
  // walk's entries that reach it.
  struct Row {
    LabelId label = 0;
    Edge edge = Edge::kCall;
    bool inlined = false;
    std::vector<double> inclusive, exclusive;  // stored metrics
    std::vector<uint32_t> sites;               // sorted, distinct
    uint32_t begin = 0, end = 0;               // entries of the walk
  };

  // One expansion of the view: its own entry array, so walks do not disturb each other.
  class Walk {
   public:
    // The view's root: the program root, or the focused function (Focus()).
    Row Root();
    // The children of `row`: the functions (under the program root) or callers.
    std::vector<Row> Children(const Row& row);

   private:
    friend class BottomUp;
    explicit Walk(const BottomUp& view);
    Row MakeRow(LabelId label, Edge edge, uint32_t begin, uint32_t end);

    const BottomUp& view_;
    const RowTree& tree_;
    struct Entry {
      uint32_t context;  // the top-down row of the function
      uint32_t caller;   // the top-down row of the row's last label (context itself at first)
    };
    std::vector<Entry> entries_;
  };
  Walk Expand() const { return Walk(*this); }

  // The functions: every child of the program root (all contexts of a function
  // merged, recursion counted once). What `summary` ranks.
  std::vector<Row> Functions() const;

  // Roots the view at the function `name` (matched as FocusOn matches, filter.h):
  // the row of its contexts, expandable into its callers.
  Status Focus(const std::string& name);
  bool focused() const { return focus_label_ != kNoFocus; }

 private:
  static constexpr LabelId kNoFocus = UINT32_MAX;
  const RowTree* top_down_;
  // Contexts with a value, sorted by (label, pre-order): each function's contexts are
  // one run, function_runs_[i] = (label, begin, end).
  std::vector<uint32_t> by_function_;
  struct Run {
    LabelId label;
    uint32_t begin, end;
  };
  std::vector<Run> function_runs_;
  // With a focus: its contexts (the matched functions' runs merged, in pre-order).
  LabelId focus_label_ = kNoFocus;
  std::vector<uint32_t> focus_contexts_;
};

}  // namespace cilkprof::views
