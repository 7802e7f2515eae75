// Per-thread timelines (see timeline_table.h).
#include "cilkprof/aggregator/timeline_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace cilkprof::aggregator {

Status TimelineTable::Validate(const google::protobuf::RepeatedPtrField<wire::TimelineChunk>& chunks,
                               uint64_t unix_minus_monotonic_ns,
                               const std::function<bool(uint32_t, uint32_t, uint32_t)>& node_declared) {
  for (const wire::TimelineChunk& chunk : chunks) {
    const std::string who = fmt::format("thread {} (tid {})", chunk.thread_index(), chunk.tid());
    const int n = chunk.time_delta_ns_size();
    if (chunk.kind_size() != n || chunk.state_size() != n || chunk.node_size() != n) {
      return Status::Error(fmt::format("{}: a timeline chunk's arrays differ in length ({} times, {} kinds, "
                                       "{} states, {} nodes)",
                                       who, n, chunk.kind_size(), chunk.state_size(), chunk.node_size()));
    }
    if (n > 0 && unix_minus_monotonic_ns == 0) {
      return Status::Error(fmt::format("{} sends timeline events, but the Hello gave no clock offset "
                                       "(unix_minus_monotonic_ns)",
                                       who));
    }
    uint64_t time = unix_minus_monotonic_ns;
    for (int i = 0; i < n; ++i) {
      if (__builtin_add_overflow(time, chunk.time_delta_ns(i), &time)) {
        return Status::Error(fmt::format("{}: timeline event {} has a time past 2^64 ns", who, i));
      }
      const int kind = chunk.kind(i), state = chunk.state(i);
      if (!wire::TimelineEventKind_IsValid(kind) || kind == wire::TIMELINE_EVENT_UNKNOWN ||
          !wire::TimelineState_IsValid(state)) {
        return Status::Error(fmt::format("{}: timeline event {} has an unknown kind {} or state {}", who, i,
                                         kind, state));
      }
      if (kind == wire::TIMELINE_SAMPLE && !node_declared(chunk.thread_index(), chunk.tid(), chunk.node(i))) {
        return Status::Error(fmt::format("{}: timeline sample {} names unknown node {}", who, i, chunk.node(i)));
      }
    }
  }
  return Status::Ok();
}

void TimelineTable::Merge(const google::protobuf::RepeatedPtrField<wire::TimelineChunk>& chunks,
                          uint64_t unix_minus_monotonic_ns,
                          const std::function<uint32_t(uint32_t, uint32_t, uint32_t)>& merged_node) {
  for (const wire::TimelineChunk& chunk : chunks) {
    Track& track = tracks_[TrackKey{chunk.thread_index(), chunk.tid()}];
    if (chunk.worker_id_plus_1() != 0) track.worker_id_plus_1 = chunk.worker_id_plus_1();
    track.dropped += chunk.dropped();
    uint64_t time = unix_minus_monotonic_ns;
    for (int i = 0; i < chunk.time_delta_ns_size(); ++i) {
      time += chunk.time_delta_ns(i);
      const int kind = chunk.kind(i);
      track.unix_ns.push_back(time);
      track.kind_state.push_back(static_cast<uint8_t>(kind << 4 | chunk.state(i)));
      track.node.push_back(kind == wire::TIMELINE_SAMPLE
                               ? merged_node(chunk.thread_index(), chunk.tid(), chunk.node(i))
                               : chunk.node(i));
    }
  }
}

void TimelineTable::Fold(const TimelineTable& earlier, const std::vector<uint32_t>& node_map) {
  for (const auto& [key, before] : earlier.tracks_) {
    Track& track = tracks_[key];
    if (track.worker_id_plus_1 == 0) track.worker_id_plus_1 = before.worker_id_plus_1;
    track.dropped += before.dropped;
    // The earlier image's events come first (Build sorts by time anyway).
    std::vector<uint32_t> nodes = before.node;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (IsSample(before.kind_state[i])) nodes[i] = node_map[nodes[i]];
    }
    track.unix_ns.insert(track.unix_ns.begin(), before.unix_ns.begin(), before.unix_ns.end());
    track.kind_state.insert(track.kind_state.begin(), before.kind_state.begin(), before.kind_state.end());
    track.node.insert(track.node.begin(), nodes.begin(), nodes.end());
  }
}

void TimelineTable::MarkNodes(std::vector<char>* keep) const {
  for (const auto& [key, track] : tracks_) {
    for (size_t i = 0; i < track.node.size(); ++i) {
      if (IsSample(track.kind_state[i])) (*keep)[track.node[i]] = 1;
    }
  }
}

TimelineTable TimelineTable::TakeWindow(const std::vector<uint32_t>& node_map) {
  TimelineTable window;
  window.tracks_.swap(tracks_);
  for (auto& [key, track] : window.tracks_) {
    for (size_t i = 0; i < track.node.size(); ++i) {
      if (IsSample(track.kind_state[i])) track.node[i] = node_map[track.node[i]];
    }
    // The next window's track keeps knowing which worker the thread is.
    tracks_[key].worker_id_plus_1 = track.worker_id_plus_1;
  }
  return window;
}

void TimelineTable::Build(uint64_t start_unix_ns, profile::Profile* out) const {
  if (tracks_.empty()) return;
  profile::Timeline* timeline = out->mutable_timeline();
  timeline->set_start_unix_ns(start_unix_ns);
  uint64_t dropped = 0;
  for (const auto& [key, track] : tracks_) {
    if (track.unix_ns.empty() && track.dropped == 0) continue;  // a window's placeholder
    profile::TimelineTrack* t = timeline->add_tracks();
    t->set_thread_index(key.first);
    t->set_tid(key.second);
    t->set_worker_id_plus_1(track.worker_id_plus_1);
    t->set_dropped_events(track.dropped);
    dropped += track.dropped;
    // Each chunk is in time order; chunks of one thread's two rings may overlap at a
    // flush's edge, and an exec chain's images are concatenated: sort, stably.
    std::vector<uint32_t> order(track.unix_ns.size());
    std::iota(order.begin(), order.end(), 0u);
    if (!std::is_sorted(track.unix_ns.begin(), track.unix_ns.end())) {
      // A named reference: clang 14 (the fuzz build) cannot capture a structured binding.
      const auto& times = track.unix_ns;
      std::stable_sort(order.begin(), order.end(),
                       [&times](uint32_t a, uint32_t b) { return times[a] < times[b]; });
    }
    const int n = static_cast<int>(order.size());
    t->mutable_time_ns()->Reserve(n);
    t->mutable_kind()->Reserve(n);
    t->mutable_state()->Reserve(n);
    t->mutable_node()->Reserve(n);
    for (uint32_t i : order) {
      const uint64_t unix_ns = track.unix_ns[i];
      t->add_time_ns(unix_ns > start_unix_ns ? unix_ns - start_unix_ns : 0);
      t->add_kind(static_cast<wire::TimelineEventKind>(track.kind_state[i] >> 4));
      t->add_state(static_cast<wire::TimelineState>(track.kind_state[i] & 0xf));
      t->add_node(track.node[i]);
    }
  }
  timeline->set_dropped_events(dropped);
  if (timeline->tracks_size() == 0) out->clear_timeline();
}

}  // namespace cilkprof::aggregator
