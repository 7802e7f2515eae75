// A recorded timeline (Profile.timeline, issue 16) read as its consumers need it:
// each track's samples merged into slices of one state and context, its sync waits
// paired, its steals; the names of the contexts; the tracks' names. Shared by
// `cilkprof export --format chrome-trace` (chrome_trace.cc) and `cilkprof view
// timeline` (command_timeline.cc). Time and memory: one pass over each track's events,
// memory per track bounded by its sync-wait nesting, names cached per location.
//
// A sample's time span. The sampler takes a sample when a period p of the thread's
// clock (ProcessInfo.period_ns) has elapsed, so a sample at time t stands for the
// period that ended at t: [t - p, t] (for the cpu clock this is wall time only while
// the thread ran; a descheduled thread shows a gap). Slices follow from it:
//   - a slice is a run of consecutive samples of one track with the same state and the
//     same context (profile node), nothing else in between: no steal, no sync-wait
//     begin or end, and no gap longer than half a period beyond the previous sample's span (the
//     next sample at most 1.5 p after the previous one), so a thread that stopped
//     being sampled for a while shows the hole instead of a long slice;
//   - it starts at the first sample's t - p, but never before the end of the track's
//     previous slice, the last steal or sync-wait boundary or time 0 (slices never overlap and
//     nest inside sync waits), and ends at its last sample's t.
// Sync waits: a begin opens one, an end closes the innermost open one (they nest when
// a worker waiting at a sync runs stolen work that syncs again); an end with none open
// is ignored, a wait still open at the track's last event ends there.
// Times out of order (a malformed track) are clamped to the previous event's time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"
#include "cilkprof/views/labels.h"
#include "cilkprof/views/profile_nodes.h"

namespace cilkprof::cli::timeline {

using State = wire::TimelineState;

// "working", "idle", "overhead", "lock_wait", "not_a_worker", "unknown".
const char* StateName(State state);

struct Slice {
  uint64_t start_ns = 0;  // since Timeline.start_unix_ns
  uint64_t end_ns = 0;
  State state = wire::TIMELINE_STATE_UNKNOWN;
  uint32_t node = 0;      // Profile.nodes index of the samples' context (0: none)
  uint32_t samples = 0;
};

struct SyncWait {
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  uint32_t depth = 0;   // 0 outermost
  bool closed = true;   // false: no end was recorded; end_ns is the track's last event
};

struct Steal {
  uint64_t time_ns = 0;
  uint32_t victim_worker_plus_1 = 0;  // 0 when the runtime did not say
};

struct TrackVisitor {
  std::function<void(const Slice&)> slice;
  std::function<void(const SyncWait&)> sync_wait;  // when it ends
  std::function<void(const Steal&)> steal;
};

// The sampling period the slices assume: ProcessInfo.period_ns, else 1 ms.
uint64_t PeriodOf(const profile::Profile& profile);

// Replays one track's events, oldest first, calling `visitor` as slices and sync
// waits end and as steals occur. Callbacks left empty are skipped.
void SliceTrack(const profile::TimelineTrack& track, uint64_t period_ns, const TrackVisitor& visitor);

// The track's display name: "worker N" for a runtime worker, else the thread's name
// (ThreadInfo.name), else "thread TID".
std::string TrackName(const profile::Profile& profile, const profile::TimelineTrack& track);

// The earliest slice start and the latest event of all tracks, ns.
struct Span {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool empty() const { return end_ns <= start_ns; }
};
Span SpanOf(const profile::Timeline& timeline, uint64_t period_ns);

// Names of the samples' contexts, through the views' labels: the leaf function of a
// node (its location's innermost source frame, as the top-down view's leaf row names
// it), the markers' names, "[lock NAME]" for a lock leaf; and a short logical path.
class ContextNames {
 public:
  ContextNames(const profile::Profile& profile, const views::ProfileNodes& nodes);

  // The leaf function of `node`; "" for node 0 (no context) or one out of range.
  const std::string& Function(uint32_t node);
  // The innermost `max_frames` frames of the node's logical path, outermost first,
  // "a > [spawn] b > c" ("[task] b" for an OpenMP task), with "... > " in front when cut.
  std::string Path(uint32_t node, size_t max_frames);

 private:
  // The labels of a node's frames, innermost first; `spawn` marks the outermost one's edge.
  void FramesOf(uint32_t node, std::vector<views::LabelId>* out);
  const std::vector<views::LabelId>& LocationLabels(uint32_t location);  // outermost first

  const profile::Profile& profile_;
  const views::ProfileNodes& nodes_;
  views::LabelTable labels_;
  std::vector<std::vector<views::LabelId>> by_location_;
  std::vector<views::LabelId> lock_labels_;  // by location, 0 = not yet
  views::LabelId partial_, elided_, unknown_;
};

}  // namespace cilkprof::cli::timeline
