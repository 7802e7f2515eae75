// A recorded timeline in time buckets (timeline_buckets.h).
#include "timeline_buckets.h"

#include <algorithm>
#include <unordered_map>

namespace cilkprof::cli::timeline {
namespace {

// The order ties between states are broken in: what a reader most wants to see.
constexpr State kTiePriority[] = {wire::TIMELINE_WORKING,  wire::TIMELINE_LOCK_WAIT,     wire::TIMELINE_OVERHEAD,
                                  wire::TIMELINE_IDLE,     wire::TIMELINE_NOT_A_WORKER, wire::TIMELINE_STATE_UNKNOWN};

size_t StateIndex(State state) {
  const auto index = static_cast<size_t>(state);
  return index < kStateCount ? index : 0;
}

// Calls add(index, overlap_ns) for each of `count` equal parts of width `width` from
// `origin` that [start, end] overlaps; a zero-length interval counts 1 ns in its part.
template <typename Add>
void Spread(uint64_t origin, uint64_t width, size_t count, uint64_t start, uint64_t end, Add add) {
  auto part_of = [&](uint64_t t) { return std::min<size_t>((t - origin) / width, count - 1); };
  if (end <= start) {
    add(part_of(start), 1);
    return;
  }
  for (size_t part = part_of(start); part < count; ++part) {
    const uint64_t lo = std::max(start, origin + part * width);
    const uint64_t hi = part + 1 == count ? end : std::min(end, origin + (part + 1) * width);
    if (hi > lo) add(part, hi - lo);
    if (hi >= end) break;
  }
}

}  // namespace

char StateChar(State state) {
  switch (state) {
    case wire::TIMELINE_WORKING:
      return '#';
    case wire::TIMELINE_IDLE:
      return '.';
    case wire::TIMELINE_OVERHEAD:
      return 'o';
    case wire::TIMELINE_LOCK_WAIT:
      return 'L';
    case wire::TIMELINE_NOT_A_WORKER:
      return '-';
    default:
      return '?';
  }
}

char DominantChar(const StateTimes& times) {
  State best = wire::TIMELINE_STATE_UNKNOWN;
  uint64_t most = 0;
  for (const State state : kTiePriority) {
    if (times[StateIndex(state)] > most) {
      most = times[StateIndex(state)];
      best = state;
    }
  }
  return most == 0 ? ' ' : StateChar(best);
}

std::string TrackBuckets::Row() const {
  std::string row;
  row.reserve(buckets.size());
  for (const StateTimes& times : buckets) row += DominantChar(times);
  return row;
}

TimelineGrid BucketTimeline(const profile::Profile& profile, ContextNames& names, size_t buckets, size_t segments) {
  const profile::Timeline& recorded = profile.timeline();
  const uint64_t period = PeriodOf(profile);
  TimelineGrid grid;
  grid.span = SpanOf(recorded, period);
  if (grid.span.empty()) grid.span.end_ns = grid.span.start_ns + 1;
  buckets = std::max<size_t>(buckets, 1);
  grid.segment_count = std::max<size_t>(segments, 1);
  const uint64_t length = grid.span.end_ns - grid.span.start_ns;
  grid.bucket_ns = std::max<uint64_t>((length + buckets - 1) / buckets, 1);
  grid.segment_ns = std::max<uint64_t>((length + grid.segment_count - 1) / grid.segment_count, 1);
  grid.steals.assign(buckets, 0);
  grid.dropped_events = recorded.dropped_events();

  // Workers first, by worker id, then the others in track order.
  std::vector<int> order(static_cast<size_t>(recorded.tracks_size()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto key = [&](int t) {
    const uint32_t worker = recorded.tracks(t).worker_id_plus_1();
    return std::make_pair(worker == 0, worker);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });

  for (const int t : order) {
    const profile::TimelineTrack& track = recorded.tracks(t);
    TrackBuckets row;
    row.name = TrackName(profile, track);
    row.thread_index = track.thread_index();
    row.tid = track.tid();
    row.worker_id_plus_1 = track.worker_id_plus_1();
    row.dropped_events = track.dropped_events();
    row.buckets.assign(buckets, StateTimes{});
    // Working time per function, per segment.
    std::vector<std::unordered_map<std::string, uint64_t>> work(grid.segment_count);
    row.segments.assign(grid.segment_count, SegmentTop{});

    TrackVisitor visitor;
    visitor.slice = [&](const Slice& slice) {
      const size_t state = StateIndex(slice.state);
      row.samples[state] += slice.samples;
      row.totals[state] += slice.end_ns - slice.start_ns;
      Spread(grid.span.start_ns, grid.bucket_ns, buckets, slice.start_ns, slice.end_ns,
             [&](size_t bucket, uint64_t ns) { row.buckets[bucket][state] += ns; });
      if (slice.state != wire::TIMELINE_WORKING) return;
      const std::string& function = names.Function(slice.node);
      Spread(grid.span.start_ns, grid.segment_ns, grid.segment_count, slice.start_ns, slice.end_ns,
             [&](size_t segment, uint64_t ns) {
               work[segment][function.empty() ? "??" : function] += ns;
               row.segments[segment].segment_working_ns += ns;
             });
    };
    visitor.sync_wait = [&](const SyncWait&) { ++row.sync_waits; };
    visitor.steal = [&](const Steal& steal) {
      ++row.steals;
      Spread(grid.span.start_ns, grid.bucket_ns, buckets, steal.time_ns, steal.time_ns,
             [&](size_t bucket, uint64_t) { ++grid.steals[bucket]; });
    };
    SliceTrack(track, period, visitor);
    for (size_t s = 0; s < grid.segment_count; ++s) {
      for (const auto& [function, ns] : work[s]) {
        SegmentTop& top = row.segments[s];
        if (ns > top.working_ns || (ns == top.working_ns && function < top.function)) {
          top.function = function;
          top.working_ns = ns;
        }
      }
    }
    grid.tracks.push_back(std::move(row));
  }
  return grid;
}

}  // namespace cilkprof::cli::timeline
