// Per-lock totals (issue 14, lock blame; docs/PROFILE_FORMAT.md "Locks").
//
// The agent sends each contended lock's exact totals as wire::LockDelta increments
// inside Deltas. The table validates a Delta's entries completely before the session
// merges anything (all or nothing, like the rest of a Delta), sums them per lock,
// keyed by the lock object's address as (module identity, offset) so that the same
// global lock seen through two module ids, or by two images of an exec chain, is one
// row, and writes Profile.locks hottest first.
//
// Not thread-safe: owned by one Session.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator {

class LockTable {
 public:
  bool empty() const { return locks_.empty(); }

  // Checks a Delta's entries: a known lock kind, a module the connection announced
  // (`module_known`, as for a FRAME_LOCK node; 0 is an absolute address), and at most
  // one entry per lock.
  static Status Validate(const google::protobuf::RepeatedPtrField<wire::LockDelta>& locks,
                         const std::function<bool(uint32_t)>& module_known);
  // Adds validated entries; `module_index` maps an agent module id (not 0) to the
  // session's module index.
  void Merge(const google::protobuf::RepeatedPtrField<wire::LockDelta>& locks,
             const std::function<uint32_t(uint32_t)>& module_index);
  // Adds another table whose module indexes map through `module_map` (an exec chain's
  // earlier image, see Session::FoldExecPredecessor).
  void Fold(const LockTable& earlier, const std::vector<uint32_t>& module_map);
  // Writes Profile.locks, sorted by wait_ns, hottest first (ties: blame, then address);
  // `location_of(module, offset)` gives the lock object's data location, the one its
  // FRAME_LOCK nodes share.
  void Build(const std::function<uint32_t(uint32_t, uint64_t)>& location_of,
             profile::Profile* out) const;
  // Continuous mode: returns the totals merged since the last call and starts afresh
  // (entries are increments, nothing later ones need is kept).
  LockTable TakeWindow() {
    LockTable window;
    window.locks_.swap(locks_);
    return window;
  }

 private:
  struct Totals {
    int kind = 0;  // wire::LockKind of the latest entry (a destroyed lock's address may be reused)
    uint64_t contended = 0, wait_ns = 0, blame_ns = 0, timeouts = 0;
    uint64_t acquisitions = 0;  // estimated (wire.LockDelta.acquisitions)
    void Add(const Totals& in);
  };
  std::map<std::pair<uint32_t, uint64_t>, Totals> locks_;  // (module index, offset)
};

}  // namespace cilkprof::aggregator
