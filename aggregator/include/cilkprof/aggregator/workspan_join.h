// Joining the work/span instrumentation's call-site table into the profile (issue 5;
// docs/PROFILE_FORMAT.md "Work and span").
//
// The agent sends WorkSpanDelta messages inside Deltas (wire.proto): increments of the
// whole-program figures and of per-call-site metrics, with each call site's code
// addresses (scope entry or spawn point, the enclosing site, the callee) given once, as
// (module path, build-id, offset). The join validates each message completely before
// the session merges anything (all or nothing, like the rest of a Delta), adds the
// increments, and at build time maps every address to a Profile.locations entry
// (shared with the calling-context tree, symbolized the same way) and writes
// Profile.workspan.
//
// Not thread-safe: owned by one Session.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cilkprof/aggregator/symbol_source.h"
#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator {

class WorkSpanJoin {
 public:
  bool empty() const { return !seen_; }

  // Checks one message against the protocol and what was merged before: ids, kinds,
  // module references, a site's first appearance carrying its location, a clock or
  // unit that never changes, finite what-if values.
  Status Validate(const wire::WorkSpanDelta& delta) const;
  // Adds a validated message.
  void Merge(const wire::WorkSpanDelta& delta);
  // Writes Profile.workspan (nothing when no message came), adding modules and
  // locations to `out` as needed and symbolizing new locations with `symbols`.
  void Build(SymbolSource& symbols, profile::Profile* out) const;
  // Continuous mode (server.h, "Windows"): returns what was merged since the last call
  // (empty() when no message came), with the call sites that gained something, and
  // zeroes the increments here. What later messages are checked against stays: the
  // sites' definitions (a site's location is sent once per connection), the clock, the
  // unit, the burden, the region names and what-if factors.
  WorkSpanJoin TakeWindow();

 private:
  struct Address {
    bool present = false;
    std::string path, build_id;  // empty path: offset is an absolute address
    uint64_t offset = 0;
  };
  struct Site {
    int kind = 0;
    int start_point = 0, end_point = 0;  // strands: wire::WorkSpanStrandPoint
    Address location, parent, callee;
    uint64_t count = 0, work_on_work = 0, span_on_work = 0, work_on_span = 0, span_on_span = 0;
    uint64_t burdened_span_on_work = 0;
  };

  bool seen_ = false;
  bool seen_in_window_ = false;  // a message came since the last TakeWindow
  std::string clock_, unit_;
  uint64_t burden_ = 0;
  uint64_t work_ = 0, span_ = 0, burdened_span_ = 0, spawns_ = 0, syncs_ = 0, computations_ = 0;
  uint64_t regions_dropped_ = 0, sites_dropped_ = 0;
  bool incomplete_ = false;
  std::string model_;  // WorkSpanDelta.model: empty for the Cilk runtime, "openmp tasks (...)"
  uint64_t tasks_with_dependences_ = 0;
  std::vector<std::string> regions_;
  std::vector<uint32_t> factors_;
  std::vector<double> whatif_span_;
  std::map<uint32_t, Site> sites_;
};

}  // namespace cilkprof::aggregator
