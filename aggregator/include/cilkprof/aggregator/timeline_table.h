// The per-thread timeline of one connection (issue 16; docs/PROFILE_FORMAT.md
// "Timeline").
//
// The agent sends each thread's new timeline events as wire::TimelineChunks inside
// Deltas: times on CLOCK_MONOTONIC, delta-encoded; samples name the thread's CCT node.
// The table validates a Delta's chunks completely before the session merges anything
// (all or nothing, like the rest of a Delta), and keeps each thread's events in
// compact columns (13 bytes an event: the Unix time, the kind and state in one byte,
// the merged node or a steal's victim), never one message per event, until Build
// writes Profile.timeline with times relative to the profile's start.
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

class TimelineTable {
 public:
  bool empty() const { return tracks_.empty(); }

  // Checks a Delta's chunks: parallel arrays of one length, known kinds and states,
  // times that do not overflow, and sample nodes the thread declared
  // (`node_declared(thread_index, tid, node)`, true for 0, the root); and that the
  // Hello gave the clock offset (`unix_minus_monotonic_ns` != 0) when there are events.
  static Status Validate(const google::protobuf::RepeatedPtrField<wire::TimelineChunk>& chunks,
                         uint64_t unix_minus_monotonic_ns,
                         const std::function<bool(uint32_t, uint32_t, uint32_t)>& node_declared);
  // Adds validated chunks; `merged_node(thread_index, tid, node)` maps a sample's node
  // to the session's merged node index.
  void Merge(const google::protobuf::RepeatedPtrField<wire::TimelineChunk>& chunks,
             uint64_t unix_minus_monotonic_ns,
             const std::function<uint32_t(uint32_t, uint32_t, uint32_t)>& merged_node);
  // Adds another table whose merged nodes map through `node_map` (an exec chain's
  // earlier image, see Session::FoldExecPredecessor).
  void Fold(const TimelineTable& earlier, const std::vector<uint32_t>& node_map);
  // Marks the merged nodes samples name (continuous mode keeps them in the window).
  void MarkNodes(std::vector<char>* keep) const;
  // Continuous mode: returns the events merged since the last call, their nodes mapped
  // through `node_map` (old merged index -> the window's), and starts afresh.
  TimelineTable TakeWindow(const std::vector<uint32_t>& node_map);
  // Writes Profile.timeline: tracks by (thread_index, tid), events oldest first, times
  // in ns since `start_unix_ns` (events before it at 0).
  void Build(uint64_t start_unix_ns, profile::Profile* out) const;

 private:
  struct Track {
    uint32_t worker_id_plus_1 = 0;
    std::vector<uint64_t> unix_ns;
    std::vector<uint8_t> kind_state;  // kind << 4 | state (both below 16)
    std::vector<uint32_t> node;       // samples: merged node; steals: victim id + 1
    uint64_t dropped = 0;
  };
  using TrackKey = std::pair<uint32_t, uint32_t>;  // (thread_index, tid)
  static bool IsSample(uint8_t kind_state) { return (kind_state >> 4) == wire::TIMELINE_SAMPLE; }
  std::map<TrackKey, Track> tracks_;
};

}  // namespace cilkprof::aggregator
