// A recorded timeline's slices, sync waits, steals and names (timeline_slices.h).
#include "export/timeline_slices.h"

#include <algorithm>

#include "cilkprof/views/locks.h"

namespace cilkprof::cli::timeline {

const char* StateName(State state) {
  switch (state) {
    case wire::TIMELINE_WORKING:
      return "working";
    case wire::TIMELINE_IDLE:
      return "idle";
    case wire::TIMELINE_OVERHEAD:
      return "overhead";
    case wire::TIMELINE_LOCK_WAIT:
      return "lock_wait";
    case wire::TIMELINE_NOT_A_WORKER:
      return "not_a_worker";
    default:
      return "unknown";
  }
}

uint64_t PeriodOf(const profile::Profile& profile) {
  const uint64_t period = profile.process().period_ns();
  return period > 0 ? period : 1'000'000;
}

void SliceTrack(const profile::TimelineTrack& track, uint64_t period_ns, const TrackVisitor& visitor) {
  // The parallel arrays should be of one length; a shorter one ends the track.
  const int count = std::min({track.time_ns_size(), track.kind_size(), track.state_size(), track.node_size()});
  std::vector<SyncWait> open_waits;
  Slice slice;
  bool in_slice = false;
  uint64_t floor = 0;  // no slice starts before it: the previous slice's end, the last sync boundary
  uint64_t now = 0;
  auto close_slice = [&] {
    if (!in_slice) return;
    in_slice = false;
    floor = std::max(floor, slice.end_ns);
    if (visitor.slice) visitor.slice(slice);
  };
  for (int i = 0; i < count; ++i) {
    now = std::max(now, track.time_ns(i));
    switch (track.kind(i)) {
      case wire::TIMELINE_SAMPLE: {
        const State state = track.state(i);
        const uint32_t node = track.node(i);
        const bool continues = in_slice && slice.state == state && slice.node == node &&
                               now <= slice.end_ns + period_ns + period_ns / 2;
        if (continues) {
          slice.end_ns = now;
          ++slice.samples;
          break;
        }
        close_slice();
        slice.state = state;
        slice.node = node;
        slice.start_ns = std::max(now > period_ns ? now - period_ns : 0, floor);
        slice.end_ns = now;
        slice.samples = 1;
        in_slice = true;
        break;
      }
      case wire::TIMELINE_STEAL:
        // The stolen work starts here: the slices after it begin at the steal (the
        // trace's flow arrow binds to the next slice).
        close_slice();
        floor = now;
        if (visitor.steal) visitor.steal(Steal{now, track.node(i)});
        break;
      case wire::TIMELINE_SYNC_WAIT_BEGIN:
        close_slice();
        floor = now;
        open_waits.push_back(SyncWait{now, now, static_cast<uint32_t>(open_waits.size()), true});
        break;
      case wire::TIMELINE_SYNC_WAIT_END:
        close_slice();
        floor = now;
        if (!open_waits.empty()) {
          SyncWait wait = open_waits.back();
          open_waits.pop_back();
          wait.end_ns = now;
          if (visitor.sync_wait) visitor.sync_wait(wait);
        }
        break;
      default:
        break;  // a kind this reader does not know: skipped
    }
  }
  close_slice();
  while (!open_waits.empty()) {
    SyncWait wait = open_waits.back();
    open_waits.pop_back();
    wait.end_ns = now;
    wait.closed = false;
    if (visitor.sync_wait) visitor.sync_wait(wait);
  }
}

std::string TrackName(const profile::Profile& profile, const profile::TimelineTrack& track) {
  if (track.worker_id_plus_1() > 0) return "worker " + std::to_string(track.worker_id_plus_1() - 1);
  for (const profile::ThreadInfo& thread : profile.threads()) {
    if (thread.thread_index() == track.thread_index() && !thread.name().empty()) return thread.name();
  }
  return "thread " + std::to_string(track.tid());
}

Span SpanOf(const profile::Timeline& timeline, uint64_t period_ns) {
  Span span;
  bool any = false;
  for (const profile::TimelineTrack& track : timeline.tracks()) {
    if (track.time_ns_size() == 0) continue;
    const uint64_t first = track.time_ns(0);
    const uint64_t start = first > period_ns ? first - period_ns : 0;
    const uint64_t last = *std::max_element(track.time_ns().begin(), track.time_ns().end());
    span.start_ns = any ? std::min(span.start_ns, start) : start;
    span.end_ns = std::max(span.end_ns, last);
    any = true;
  }
  return span;
}

ContextNames::ContextNames(const profile::Profile& profile, const views::ProfileNodes& nodes)
    : profile_(profile), nodes_(nodes) {
  by_location_.resize(static_cast<size_t>(std::max(profile.locations_size(), 1)));
  lock_labels_.assign(by_location_.size(), 0);
  partial_ = labels_.Intern(views::RowKind::kPartialUnwind, views::kPartialUnwindName, "", 0, "");
  elided_ = labels_.Intern(views::RowKind::kElidedFrames, views::kElidedFramesName, "", 0, "");
  unknown_ = labels_.Intern(views::RowKind::kContext, "??", "", 0, "");
}

const std::vector<views::LabelId>& ContextNames::LocationLabels(uint32_t location) {
  std::vector<views::LabelId>& out = by_location_[location];
  if (!out.empty()) return out;
  const profile::Location& where = profile_.locations(static_cast<int>(location));
  const uint32_t module_index = where.module();
  const std::string module = module_index > 0 && module_index < static_cast<uint32_t>(profile_.modules_size())
                                 ? profile_.modules(static_cast<int>(module_index)).path()
                                 : std::string();
  for (const profile::SourceFrame& frame : where.frames()) {
    const std::string& file = frame.function_file().empty() ? frame.file() : frame.function_file();
    out.push_back(labels_.Intern(views::RowKind::kContext, frame.function().empty() ? "??" : frame.function(), file,
                                 frame.function_line(), module));
  }
  if (out.empty()) out.push_back(labels_.Intern(views::RowKind::kContext, "??", "", 0, module));
  return out;
}

void ContextNames::FramesOf(uint32_t node, std::vector<views::LabelId>* out) {
  const uint32_t location = nodes_.location(node);
  const bool valid = location > 0 && location < by_location_.size();
  if (nodes_.lock(node)) {
    const uint32_t at = valid ? location : 0;
    if (lock_labels_[at] == 0) {
      const views::LockIdentity lock = views::LockIdentityOf(profile_, at);
      lock_labels_[at] = labels_.Intern(views::RowKind::kLock, views::LockRowName(lock.name), lock.file, lock.line, "");
    }
    out->push_back(lock_labels_[at]);
  } else if (nodes_.partial_unwind(node)) {
    out->push_back(partial_);
  } else if (nodes_.elided_frames(node)) {
    out->push_back(elided_);
  } else if (valid) {
    const std::vector<views::LabelId>& frames = LocationLabels(location);
    out->insert(out->end(), frames.rbegin(), frames.rend());
  } else {
    out->push_back(unknown_);
  }
}

const std::string& ContextNames::Function(uint32_t node) {
  static const std::string kNone;
  if (node == 0 || node >= nodes_.size()) return kNone;
  std::vector<views::LabelId> frames;
  FramesOf(node, &frames);
  return labels_.Name(frames.front());
}

std::string ContextNames::Path(uint32_t node, size_t max_frames) {
  if (node == 0 || node >= nodes_.size() || max_frames == 0) return "";
  std::vector<std::string> names;  // innermost first
  bool cut = false;
  std::vector<views::LabelId> frames;
  for (uint32_t n = node; n != 0 && !cut; n = nodes_.parent(n)) {
    frames.clear();
    FramesOf(n, &frames);
    for (size_t f = 0; f < frames.size(); ++f) {
      if (names.size() == max_frames) {
        cut = true;
        break;
      }
      // The node's edge is how its outermost frame was entered (build.h).
      const char* marker = f + 1 == frames.size() ? views::EdgeMarker(nodes_.edge(n)) : nullptr;
      names.push_back(marker ? std::string(marker) + " " + labels_.Name(frames[f]) : labels_.Name(frames[f]));
    }
  }
  std::string path = cut ? "... > " : "";
  for (size_t i = names.size(); i-- > 0;) path += names[i] + (i > 0 ? " > " : "");
  return path;
}

}  // namespace cilkprof::cli::timeline
