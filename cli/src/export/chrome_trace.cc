// `--format chrome-trace`: the recorded timeline (Profile.timeline, `cilkprof run
// --timeline`) in the Trace Event Format, the JSON that Perfetto's UI
// (ui.perfetto.dev) and chrome://tracing load. The object form:
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
// (otherData: the format's place for a trace's metadata, shown by "Metadata").
//   - one process, the profiled pid, named by the program; one thread per track,
//     named "worker N" or the thread's name ("M" process_name, thread_name and
//     thread_sort_index events: workers first, in worker order);
//   - an "X" complete event per slice (timeline_slices.h says how samples become
//     slices): name = the context's leaf function (the state for samples without a
//     context), cat = the state, args = the state, the sample count and the logical
//     path (innermost kPathFrames frames);
//   - an "X" event "sync wait" (cat sync_wait) per sync wait; sample slices nest in it;
//   - per steal, an instant "i" event "steal" on the thief's thread and, when the
//     victim's track is in the timeline, a flow from the victim's thread at the steal's
//     time ("s", bound to the victim's enclosing slice) to the thief's next slice ("f"),
//     the work that was stolen.
// Times are microseconds (the format's unit) since the process started, with three
// decimals: nanoseconds are kept. The JSON is written as it is produced, track by
// track: memory stays that of the profile, whatever the number of events.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "export/exporters.h"
#include "export/timeline_slices.h"

namespace cilkprof::cli::exporters {
namespace {

constexpr size_t kPathFrames = 8;

void WriteString(std::ostream& out, std::string_view text) {
  out << '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out << escaped;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

// ns as the format's microseconds, exactly: "1234.567".
std::string Micros(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
  return text;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// chrome://tracing's reserved colour names for the states that are not work (Perfetto
// colours by name and ignores them).
const char* ColourOf(timeline::State state) {
  switch (state) {
    case wire::TIMELINE_IDLE:
      return "grey";
    case wire::TIMELINE_OVERHEAD:
      return "yellow";
    case wire::TIMELINE_LOCK_WAIT:
      return "terrible";
    default:
      return nullptr;
  }
}

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, uint32_t pid) : out_(out), pid_(pid) {}

  // Starts an event: writes the separator and the common fields; the caller adds the
  // rest and calls End().
  void Begin(const char* phase, std::string_view name, std::string_view category, uint64_t ts_ns, uint64_t tid) {
    out_ << (first_ ? "\n" : ",\n") << "{\"ph\":\"" << phase << "\",\"name\":";
    first_ = false;
    WriteString(out_, name);
    if (!category.empty()) {
      out_ << ",\"cat\":";
      WriteString(out_, category);
    }
    out_ << ",\"ts\":" << Micros(ts_ns) << ",\"pid\":" << pid_ << ",\"tid\":" << tid;
  }
  void End() { out_ << '}'; }
  std::ostream& out() { return out_; }

 private:
  std::ostream& out_;
  uint32_t pid_;
  bool first_ = true;
};

}  // namespace

Status WriteChromeTrace(const AnalysisInput& input, const ExportOptions& options, std::ostream& out) {
  const profile::Profile& profile = input.profile;
  if (!profile.has_timeline()) {
    return Status::Error("no timeline in " + options.profile_path + ": record one with cilkprof run --timeline");
  }
  const profile::Timeline& recorded = profile.timeline();
  const uint64_t period = timeline::PeriodOf(profile);
  const uint32_t pid = profile.process().pid();
  timeline::ContextNames names(profile, input.nodes);

  // A thread id per track: its tid, unless zero or taken by an earlier track (a
  // recycled tid), then one above every real tid.
  std::vector<uint64_t> tids;
  std::unordered_map<uint64_t, size_t> track_of_tid;
  std::unordered_map<uint32_t, size_t> track_of_worker;  // worker id + 1 -> track
  uint64_t spare_tid = 1ull << 32;
  for (int t = 0; t < recorded.tracks_size(); ++t) {
    const profile::TimelineTrack& track = recorded.tracks(t);
    uint64_t tid = track.tid();
    if (tid == 0 || track_of_tid.count(tid) > 0) tid = spare_tid++;
    track_of_tid[tid] = static_cast<size_t>(t);
    tids.push_back(tid);
    if (track.worker_id_plus_1() > 0) track_of_worker.emplace(track.worker_id_plus_1(), static_cast<size_t>(t));
  }

  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"profile\":";
  WriteString(out, options.profile_path);
  out << ",\"executable\":";
  WriteString(out, profile.process().executable());
  out << ",\"pid\":" << pid << ",\"clock\":";
  WriteString(out, profile.process().clock());
  out << ",\"period_ns\":" << period << ",\"start_unix_ns\":" << recorded.start_unix_ns()
      << ",\"dropped_events\":" << recorded.dropped_events()
      << ",\"slices\":\"consecutive samples of one state and context; a sample at t stands for [t - period, t]\"}"
      << ",\"traceEvents\":[";

  TraceWriter writer(out, pid);
  writer.Begin("M", "process_name", "", 0, 0);
  out << ",\"args\":{\"name\":";
  WriteString(out, Basename(profile.process().executable()));
  out << '}';
  writer.End();
  // Workers first, in worker order, then the other threads in track order.
  std::map<std::pair<uint64_t, int>, int> order;
  for (int t = 0; t < recorded.tracks_size(); ++t) {
    const uint32_t worker = recorded.tracks(t).worker_id_plus_1();
    order[{worker > 0 ? worker - 1 : (1ull << 32) + static_cast<uint64_t>(t), t}] = t;
  }
  int sort_index = 0;
  for (const auto& [key, t] : order) {
    const profile::TimelineTrack& track = recorded.tracks(t);
    writer.Begin("M", "thread_name", "", 0, tids[t]);
    out << ",\"args\":{\"name\":";
    WriteString(out, timeline::TrackName(profile, track));
    out << '}';
    writer.End();
    writer.Begin("M", "thread_sort_index", "", 0, tids[t]);
    out << ",\"args\":{\"sort_index\":" << sort_index++ << '}';
    writer.End();
  }

  uint64_t flow_id = 0;
  for (int t = 0; t < recorded.tracks_size(); ++t) {
    const uint64_t tid = tids[t];
    timeline::TrackVisitor visitor;
    visitor.slice = [&](const timeline::Slice& slice) {
      const std::string& function = names.Function(slice.node);
      writer.Begin("X", function.empty() ? timeline::StateName(slice.state) : function,
                   timeline::StateName(slice.state), slice.start_ns, tid);
      out << ",\"dur\":" << Micros(slice.end_ns - slice.start_ns);
      if (const char* colour = ColourOf(slice.state)) out << ",\"cname\":\"" << colour << '"';
      out << ",\"args\":{\"state\":\"" << timeline::StateName(slice.state) << "\",\"samples\":" << slice.samples;
      if (slice.node != 0) {
        out << ",\"path\":";
        WriteString(out, names.Path(slice.node, kPathFrames));
      }
      out << '}';
      writer.End();
    };
    visitor.sync_wait = [&](const timeline::SyncWait& wait) {
      writer.Begin("X", "sync wait", "sync_wait", wait.begin_ns, tid);
      out << ",\"dur\":" << Micros(wait.end_ns - wait.begin_ns) << ",\"args\":{\"depth\":" << wait.depth
          << ",\"ended\":" << (wait.closed ? "true" : "false") << '}';
      writer.End();
    };
    visitor.steal = [&](const timeline::Steal& steal) {
      const std::string victim =
          steal.victim_worker_plus_1 > 0 ? "worker " + std::to_string(steal.victim_worker_plus_1 - 1) : "";
      writer.Begin("i", victim.empty() ? "steal" : "steal from " + victim, "steal", steal.time_ns, tid);
      out << ",\"s\":\"t\",\"args\":{\"victim\":";
      WriteString(out, victim.empty() ? "unknown" : victim);
      out << '}';
      writer.End();
      const auto victim_track = track_of_worker.find(steal.victim_worker_plus_1);
      if (victim_track == track_of_worker.end() || victim_track->second == static_cast<size_t>(t)) return;
      ++flow_id;
      writer.Begin("s", "steal", "steal", steal.time_ns, tids[victim_track->second]);
      out << ",\"id\":" << flow_id;
      writer.End();
      writer.Begin("f", "steal", "steal", steal.time_ns, tid);
      out << ",\"id\":" << flow_id;
      writer.End();
    };
    timeline::SliceTrack(recorded.tracks(t), period, visitor);
  }
  out << "\n]}\n";
  return Status::Ok();
}

}  // namespace cilkprof::cli::exporters
