// The recorded timeline cut into equal time buckets, for `cilkprof view timeline`
// (command_timeline.cc): per track and bucket the time spent in each state (from the
// slices of export/timeline_slices.h, each slice's time split over the buckets it
// overlaps), the dominant state's character, the steals per bucket, and per track the
// function with the most working time in each of a few equal segments of the run.
// Memory: tracks x buckets x states counters, plus per segment one counter per
// function seen there.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"
#include "export/timeline_slices.h"

namespace cilkprof::cli::timeline {

// States are indexed by their wire value.
inline constexpr size_t kStateCount = 6;
using StateTimes = std::array<uint64_t, kStateCount>;  // ns per state

// One character per state: '#' working, '.' idle, 'o' overhead, 'L' lock wait,
// '-' not a worker, '?' unknown; ' ' for a bucket without samples.
char StateChar(State state);
// The state with the most time in `times` (ties: working, lock wait, overhead, idle,
// not a worker, unknown); its character, or ' ' when all are 0.
char DominantChar(const StateTimes& times);

struct SegmentTop {
  std::string function;      // "" when the track did no work in the segment
  uint64_t working_ns = 0;   // that function's working time there
  uint64_t segment_working_ns = 0;  // the track's working time in the segment
};

struct TrackBuckets {
  std::string name;  // TrackName
  uint32_t thread_index = 0, tid = 0, worker_id_plus_1 = 0;
  uint64_t dropped_events = 0;
  std::vector<StateTimes> buckets;
  StateTimes totals{};              // ns per state over the run
  std::array<uint64_t, kStateCount> samples{};
  uint64_t steals = 0, sync_waits = 0;
  std::vector<SegmentTop> segments;
  std::string Row() const;  // one character per bucket
};

struct TimelineGrid {
  Span span;                 // ns since the process started
  uint64_t bucket_ns = 0;    // the width of a bucket (the last one may reach past span.end_ns)
  size_t segment_count = 0;
  uint64_t segment_ns = 0;   // the width of a segment
  std::vector<TrackBuckets> tracks;  // workers first, by worker id, then the other threads
  std::vector<uint32_t> steals;      // per bucket, all tracks
  uint64_t dropped_events = 0;
  uint64_t BucketStart(size_t bucket) const { return span.start_ns + bucket * bucket_ns; }
  uint64_t SegmentStart(size_t segment) const {  // segment == segment_count: the span's end
    return std::min(span.start_ns + segment * segment_ns, span.end_ns);
  }
};

// Cuts the timeline of `profile` (which must have one) into `buckets` (>= 1) buckets and
// `segments` (>= 1) segments.
TimelineGrid BucketTimeline(const profile::Profile& profile, ContextNames& names, size_t buckets, size_t segments);

}  // namespace cilkprof::cli::timeline
