// The compact tree behind the top-down and flat views and their focused forms: rows
// in depth-first (pre-)order, each an interned label, an edge, a flag, its stored
// metric values (inclusive and exclusive) and the work/span call sites joined to it.
//
// Pre-order numbering makes a subtree a range: row n's descendants are the rows
// n+1 .. end(n)-1, its first child is n+1 (when n+1 < end(n)) and the sibling after
// child c is end(c). Bottom-up expansion (bottom_up.h) tests "is an ancestor of" with
// one comparison, and nothing needs per-row child vectors. A row costs about
// 13 bytes plus 16 per stored metric.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cilkprof/views/labels.h"
#include "cilkprof/views/metric_columns.h"

namespace cilkprof::views {

// The work/span figures of one call site (Profile.workspan.call_sites[i]) that the
// views' call-site columns add up.
struct CallSiteFigures {
  double work_on_work = 0;
  double span_on_work = 0;
  double span_on_span = 0;
  uint64_t count = 0;  // invocations, recursive ones included
};

// The call-site table rows point into (callsite_columns.h).
struct CallSiteTable {
  bool present = false;       // the profile has work/span data: the views show the columns
  std::string unit;           // the work/span clock's unit: "ns" or "units"
  double program_span = 0;    // T-infinity: `span %` divides span-on-span by it
  std::vector<CallSiteFigures> sites;  // indexed like Profile.workspan.call_sites
};

// What the rows of a tree share: their labels, metric columns, the program's totals
// (percentages divide by them, also in focused views) and the call-site table.
struct TreeContext {
  std::shared_ptr<LabelTable> labels = std::make_shared<LabelTable>();
  MetricColumns metrics;
  std::vector<double> program_total;  // stored metrics; empty: the root's inclusive
  std::shared_ptr<const CallSiteTable> call_sites = std::make_shared<CallSiteTable>();
  // Calling-context trees (top-down) show a site only at the top-most row carrying
  // it on a path: a deeper row of the same site is a recursive invocation, already in
  // the outer one's figures. Flat rows show their own sites.
  bool sites_topmost_only = false;
};

class RowTree {
 public:
  RowTree() = default;

  const TreeContext& context() const { return context_; }
  const LabelTable& labels() const { return *context_.labels; }
  const MetricColumns& metrics() const { return context_.metrics; }
  size_t stored_metrics() const { return context_.metrics.stored(); }

  uint32_t size() const { return static_cast<uint32_t>(label_.size()); }
  LabelId label(uint32_t n) const { return label_[n]; }
  uint32_t parent(uint32_t n) const { return parent_[n]; }  // the root's parent is 0
  uint32_t end(uint32_t n) const { return end_[n]; }        // one past n's last descendant
  Edge edge(uint32_t n) const { return static_cast<Edge>(flags_[n] & kEdgeMask); }
  // Every address folded into the row was inlined code.
  bool inlined(uint32_t n) const { return (flags_[n] & kInlinedFlag) != 0; }
  // data() + offset, not &v[offset]: a profile without metrics stores none, and
  // indexing an empty vector is undefined even when the pointer is never read.
  const double* inclusive(uint32_t n) const { return inclusive_.data() + size_t{n} * stored_metrics(); }
  const double* exclusive(uint32_t n) const { return exclusive_.data() + size_t{n} * stored_metrics(); }
  // The call sites joined to row n (indices into the call-site table, sorted, distinct).
  std::span<const uint32_t> sites(uint32_t n) const;

  // Rows of the tree, children in pre-order: for (c = FirstChild(n); c != kNone; c = NextSibling(n, c)).
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t FirstChild(uint32_t n) const { return n + 1 < end_[n] ? n + 1 : kNone; }
  uint32_t NextSibling(uint32_t parent, uint32_t child) const {
    return end_[child] < end_[parent] ? end_[child] : kNone;
  }

 private:
  friend class RowTreeBuilder;
  // The Edge in the low two bits, then the inlined flag.
  static constexpr uint8_t kEdgeMask = 3, kInlinedFlag = 4;

  TreeContext context_;
  std::vector<LabelId> label_;
  std::vector<uint32_t> parent_, end_;
  std::vector<uint8_t> flags_;
  std::vector<double> inclusive_, exclusive_;      // size() x stored metrics
  std::vector<uint32_t> site_offsets_, site_ids_;  // CSR; empty without sites
};

// Builds a RowTree: rows are added under their parent (merging with a sibling of the
// same label and edge), values accumulated, then Finish() numbers them in pre-order.
class RowTreeBuilder {
 public:
  enum class Inclusive {
    kFromExclusive,  // inclusive = exclusive + the children's inclusive (top-down)
    kAsAdded,        // the values given to AddInclusive (flat: each sample once per row)
  };

  // Row 0, the root, gets `root_label`; `context` is moved into the tree.
  explicit RowTreeBuilder(TreeContext context, LabelId root_label = LabelTable::kRoot,
                          Inclusive inclusive = Inclusive::kFromExclusive);

  // The child of `parent` with `label` and `edge`, created if missing. A merged row
  // is inlined only if everything folded into it was.
  uint32_t FindOrAdd(uint32_t parent, LabelId label, Edge edge, bool inlined);
  // A new child, never merged with its siblings.
  uint32_t Add(uint32_t parent, LabelId label, Edge edge, bool inlined);

  void AddExclusive(uint32_t row, const double* values);  // stored-metric count values
  void AddInclusive(uint32_t row, const double* values);  // only with Inclusive::kAsAdded
  void AddSites(uint32_t row, std::span<const uint32_t> sites);
  void SetInlined(uint32_t row, bool inlined);  // replaces the root's or a row's flag
  uint32_t size() const { return static_cast<uint32_t>(label_.size()); }
  const TreeContext& context() const { return context_; }
  LabelTable& labels() { return *context_.labels; }

  // Numbers the rows in pre-order, one column at a time (each builder column is freed
  // as its tree column is made, so the peak is the builder plus one column). The
  // context's program_total, when empty, becomes the root's inclusive values.
  RowTree Finish();

 private:
  uint32_t Find(uint32_t parent, LabelId label, Edge edge) const;
  void Index(uint32_t row);
  void Grow();

  TreeContext context_;
  size_t metric_count_;
  Inclusive inclusive_mode_;
  std::vector<LabelId> label_;
  std::vector<uint32_t> parent_;
  std::vector<uint8_t> flags_;
  std::vector<double> inclusive_, exclusive_;  // inclusive_ only with kAsAdded
  std::vector<std::pair<uint32_t, uint32_t>> sites_;  // (row, site), any order
  // Open addressing over (parent, label, edge) -> row: rows are only ever added, so
  // a flat table of row numbers keeps merging linear without per-row allocations.
  std::vector<uint32_t> slots_;
};

}  // namespace cilkprof::views
