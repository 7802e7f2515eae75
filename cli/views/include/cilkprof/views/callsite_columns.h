// The work/span call-site columns of the tree views (issue 5): `Work(instr)`, `Span`,
// `Parallelism` and `Span %` beside the sampled metrics of top-down, bottom-up and
// flat (docs/USER_GUIDE.md "Work/span columns"; docs/WORKSPAN.md "In the views").
//
// Call sites (Profile.workspan.call_sites) are keyed by code locations; the join
// attaches them to the nodes of the profile's address-level calling-context tree, and
// the builders (build.h) carry the result to the folded rows:
//
//   spawn site   a node entered by a spawn edge, or by an OpenMP task edge (the task's
//                creation point is keyed like a spawn point), whose parent's location
//                is the site's spawn point (compared by module path, build-id and offset);
//   call site    a node entered by a call edge whose parent's location is the site's
//                call instruction (the callee's frames under the caller stopped at
//                that call).
// Call sites of profiles written before call sites were call instructions (no
// callee_location) are not joined: their location names the callee's scope.
//
// Join results never change sampled values. Only profiles with Profile.workspan get
// the columns; without it every row's set stays empty and the tree is as before.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cilkprof/profile.pb.h"
#include "cilkprof/views/profile_nodes.h"
#include "cilkprof/views/row_tree.h"

namespace cilkprof::views {

// The table of a profile's call sites (present only with Profile.workspan).
CallSiteTable CallSiteTableOf(const profile::Profile& profile);

// For every node of profile.nodes, the call sites joined to it (sorted, distinct).
class NodeSites {
 public:
  std::span<const uint32_t> operator[](size_t node) const {
    if (node + 1 >= offsets_.size()) return {};
    return {ids_.data() + offsets_[node], ids_.data() + offsets_[node + 1]};
  }
  size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }

 private:
  friend NodeSites JoinCallSitesToNodes(const profile::Profile& profile, const ProfileNodes& nodes);
  std::vector<uint32_t> offsets_, ids_;  // CSR; empty without work/span data
};

// Every node's sites; all empty without work/span data. `nodes` are the profile's
// nodes (the second form takes them from the profile itself).
NodeSites JoinCallSitesToNodes(const profile::Profile& profile, const ProfileNodes& nodes);
NodeSites JoinCallSitesToNodes(const profile::Profile& profile);

// The source frame of a site that `view callsites` shows as its file:line (the
// innermost frame outside the Cilk library's cilk:: templates, else the outermost);
// nullptr when the location is unknown. The flat view attaches the site to that line.
const profile::SourceFrame* CallSiteUserFrame(const profile::Profile& profile, uint32_t site);

// What one row shows: the sum over the sites it shows (each once).
struct CallSiteCell {
  double work = 0;          // sum of work-on-work
  double span = 0;          // sum of span-on-work
  double span_on_span = 0;  // sum of span-on-span
  std::optional<double> parallelism;  // work / span; none when the span is 0
  double span_percent = 0;  // span_on_span / the program's span x 100; 0 without span
  uint64_t count = 0;       // invocations
};

// The cell of a row showing `sites` (those already shown by an ancestor, under
// top-most-only, left out by the caller); nullopt when it shows none.
std::optional<CallSiteCell> CellOf(const CallSiteTable& table, std::span<const uint32_t> sites);

}  // namespace cilkprof::views
