// A profile's address-level nodes (Profile.nodes) in columns: parent, location, kind
// (code, partial-unwind and elided markers, lock leaves) and edge, and the exclusive values of the nodes that have any. What the builders
// (build.h) read; filled from a Profile in memory or, for files, from the streaming
// reader (aggregator/profile_io.h), so that a large profile never exists as one
// protobuf object per node. About 14 bytes a node plus 8 per stored value.
#pragma once

#include <cstdint>
#include <vector>

#include "cilkprof/profile.pb.h"
#include "cilkprof/views/labels.h"

namespace cilkprof::views {

class ProfileNodes {
 public:
  ProfileNodes() = default;
  // The nodes of `profile` (for profiles built in memory).
  static ProfileNodes Of(const profile::Profile& profile);

  // Appends the next node (index size()).
  void Add(const profile::Node& node);

  uint32_t size() const { return static_cast<uint32_t>(parent_.size()); }
  // The parent, clamped below the node so that a malformed tree cannot loop.
  uint32_t parent(uint32_t n) const { return parent_[n] < n ? parent_[n] : 0; }
  uint32_t location(uint32_t n) const { return location_[n]; }
  bool partial_unwind(uint32_t n) const { return (flags_[n] & kPartialFlag) != 0; }
  bool elided_frames(uint32_t n) const { return (flags_[n] & kElidedFlag) != 0; }
  // A FRAME_LOCK leaf (issue 14): location() is the lock object, not code.
  bool lock(uint32_t n) const { return (flags_[n] & kLockFlag) != 0; }
  bool code(uint32_t n) const { return (flags_[n] & (kPartialFlag | kElidedFlag | kLockFlag)) == 0; }  // FRAME_PC
  Edge edge(uint32_t n) const { return static_cast<Edge>(flags_[n] >> kEdgeShift); }
  // Writes `count` exclusive values of node n to `out`, zeros where it has none.
  void Exclusive(uint32_t n, size_t count, double* out) const;

 private:
  // Kind flags in the low bits, the Edge above kEdgeShift.
  static constexpr uint8_t kPartialFlag = 1, kElidedFlag = 4, kLockFlag = 8, kEdgeShift = 4;
  std::vector<uint32_t> parent_, location_;
  std::vector<uint8_t> flags_;
  // Values of nodes with a non-zero one: node n's are values_[first_[n] .. first_[n + 1]).
  std::vector<uint32_t> first_{0};
  std::vector<double> values_;
};

}  // namespace cilkprof::views
