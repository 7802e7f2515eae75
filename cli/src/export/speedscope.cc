// `--format speedscope`: speedscope's JSON file format
// (https://www.speedscope.app/file-format-schema.json), for https://www.speedscope.app
// and `npx speedscope FILE`.
//
// What the file holds (docs/USER_GUIDE.md, "Export"):
//  - shared.frames: one frame per function as the views label it ("f", "f (inline)",
//    "?? [module]", "<partial unwind>", "[lock NAME]"), with the file and first line of
//    its definition; plus one frame "[spawn]", put on a stack between a function and
//    the function it spawned (a logical spawn edge), so speedscope's sandwich view
//    still sums each function over calls and spawns, and likewise "[task]" between a
//    function and an OpenMP task it created (wire EDGE_TASK).
//  - profile 0, "all threads": every calling context with a non-zero value of the
//    metric, weighted by it. The profile file keeps one tree merged over all threads
//    (Profile.nodes; ThreadInfo holds only per-thread counters), so this is the whole
//    program's tree as `cilkprof view top-down` shows it, in the profile's order, not
//    in time order.
//  - one profile per thread, only when the profile recorded a timeline (`cilkprof run
//    --timeline`): that thread's samples in time order, each with its context, for the
//    metrics a sample's scheduler state decides: samples (every sample in the tree:
//    not idle; weight 1), work (WORKING or not a runtime worker), overhead (OVERHEAD),
//    lock_wait (LOCK_WAIT), each weighted by the sampling period (a sample's expected
//    weight; the exact weights are only kept merged). Other metrics (idleness,
//    lock_blame, ...) are charged to contexts by blame, not by the sampled thread's
//    state: for them, and for every metric without a timeline, the per-thread values.
//  - else one profile per thread from the profile's per-thread values
//    (Profile.thread_values, docs/PROFILE_FORMAT.md "Per-thread values"): each thread's
//    calling contexts weighted by its own part of the metric, in the profile's order
//    like the merged one, whose values they add up to; the threads beyond the 64 the
//    file names one by one are one profile, "other threads". Profiles written before
//    the per-thread values have the merged profile only.
// Units: "nanoseconds" for metrics in ns, "none" for counts. Cost: time and output
// linear in the contexts times their depth (speedscope's samples are whole stacks).
#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cilkprof/views/labels.h"
#include "cilkprof/views/locks.h"
#include "cilkprof/views/metric_columns.h"
#include "cilkprof/views/walk.h"
#include "export/exporters.h"

namespace cilkprof::cli::exporters {
namespace {

void WriteJsonString(std::ostream& out, const std::string& text) {
  out << '"';
  for (const unsigned char c : text) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\t': out << "\\t"; break;
      case '\r': out << "\\r"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out << escaped;
        } else {
          out << static_cast<char>(c);
        }
    }
  }
  out << '"';
}

void WriteNumber(std::ostream& out, double value) {
  char text[32];
  // Integers (every ns and count value) exactly, fractions (blame) with 17 digits.
  if (value == static_cast<double>(static_cast<int64_t>(value)) && value < 9e15 && value > -9e15) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  } else {
    std::snprintf(text, sizeof text, "%.17g", value);
  }
  out << text;
}

// The frames of the calling contexts, each address-level node's stack computed on
// demand (outermost frame first) from the node's ancestors and the source frames of
// their locations, labelled as the views label rows.
class Frames {
 public:
  Frames(const profile::Profile& profile, const views::ProfileNodes& nodes) : profile_(profile), nodes_(nodes) {
    spawn_frame_ = Add(views::EdgeMarker(views::Edge::kSpawn), "", 0);
  }

  // The stack of node n, outermost first, into `stack`.
  void StackOf(uint32_t n, std::vector<uint32_t>& stack) {
    path_.clear();
    for (uint32_t i = n; i != 0; i = nodes_.parent(i)) path_.push_back(i);
    stack.clear();
    if (path_.empty()) {  // the root's own value: samples without a context
      stack.push_back(RootFrame());
      return;
    }
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (nodes_.edge(*it) == views::Edge::kSpawn) stack.push_back(spawn_frame_);
      if (nodes_.edge(*it) == views::Edge::kTask) stack.push_back(TaskFrame());
      const std::vector<uint32_t>& frames = NodeFrames(*it);
      stack.insert(stack.end(), frames.begin(), frames.end());
    }
  }

  void WriteShared(std::ostream& out) const {
    out << "{\"frames\":[";
    for (size_t f = 0; f < frames_.size(); ++f) {
      if (f) out << ',';
      out << "{\"name\":";
      WriteJsonString(out, frames_[f].name);
      if (!frames_[f].file.empty()) {
        out << ",\"file\":";
        WriteJsonString(out, frames_[f].file);
      }
      if (frames_[f].line != 0) out << ",\"line\":" << frames_[f].line;
      out << '}';
    }
    out << "]}";
  }

 private:
  struct Frame {
    std::string name, file;
    uint32_t line = 0;
  };

  uint32_t Add(std::string name, std::string file, uint32_t line) {
    frames_.push_back({std::move(name), std::move(file), line});
    return static_cast<uint32_t>(frames_.size() - 1);
  }

  // One frame per distinct label and inline flag.
  uint32_t FrameOf(views::LabelId label, bool inlined) {
    const uint64_t key = (uint64_t{label} << 1) | (inlined ? 1 : 0);
    auto [it, inserted] = by_label_.try_emplace(key, 0);
    if (!inserted) return it->second;
    const views::Label& l = labels_[label];
    views::RowView row;
    row.kind = l.kind;
    row.name = &labels_.Name(label);
    row.file = &labels_.File(label);
    row.line = l.line;
    row.module = &labels_.Module(label);
    row.inlined = inlined;
    it->second = Add(views::RowLabel(row), labels_.File(label), l.line);
    return it->second;
  }

  // Added on first use: files of Cilk programs keep the frame list they always had.
  uint32_t TaskFrame() {
    if (task_frame_ == UINT32_MAX) task_frame_ = Add(views::EdgeMarker(views::Edge::kTask), "", 0);
    return task_frame_;
  }

  uint32_t RootFrame() {
    if (root_frame_ == UINT32_MAX) root_frame_ = Add(views::kProgramRootName, "", 0);
    return root_frame_;
  }

  const std::string& ModulePath(uint32_t module) const {
    static const std::string kUnknown;
    if (module == 0 || module >= static_cast<uint32_t>(profile_.modules_size())) return kUnknown;
    return profile_.modules(static_cast<int>(module)).path();
  }

  // The frames of one address-level node, outermost first, as build.cc's top-down
  // tree folds them: a code address expands to its inlined chain; markers and lock
  // leaves are one frame each.
  const std::vector<uint32_t>& NodeFrames(uint32_t n) {
    const uint32_t location = nodes_.location(n);
    const bool valid = location > 0 && location < static_cast<uint32_t>(profile_.locations_size());
    std::vector<uint32_t>& out = scratch_;
    out.clear();
    if (nodes_.partial_unwind(n)) {
      out.push_back(FrameOf(labels_.Intern(views::RowKind::kPartialUnwind, views::kPartialUnwindName, "", 0, ""), false));
    } else if (nodes_.elided_frames(n)) {
      out.push_back(FrameOf(labels_.Intern(views::RowKind::kElidedFrames, views::kElidedFramesName, "", 0, ""), false));
    } else if (nodes_.lock(n)) {
      const views::LockIdentity lock = views::LockIdentityOf(profile_, valid ? location : 0);
      const std::string& module = valid ? ModulePath(profile_.locations(static_cast<int>(location)).module()) : "";
      out.push_back(FrameOf(labels_.Intern(views::RowKind::kLock, views::LockRowName(lock.name), lock.file, lock.line, module), false));
    } else if (!valid) {
      out.push_back(FrameOf(labels_.Intern(views::RowKind::kContext, "??", "", 0, ""), false));
    } else {
      auto [it, inserted] = by_location_.try_emplace(location);
      if (inserted) {
        const profile::Location& loc = profile_.locations(static_cast<int>(location));
        const std::string& module = ModulePath(loc.module());
        for (const profile::SourceFrame& frame : loc.frames()) {
          const std::string& file = frame.function_file().empty() ? frame.file() : frame.function_file();
          const std::string_view name = frame.function().empty() ? std::string_view("??") : frame.function();
          it->second.push_back(FrameOf(labels_.Intern(views::RowKind::kContext, name, file, frame.function_line(), module),
                                       frame.inlined()));
        }
        if (it->second.empty()) it->second.push_back(FrameOf(labels_.Intern(views::RowKind::kContext, "??", "", 0, module), false));
      }
      return it->second;
    }
    return out;
  }

  const profile::Profile& profile_;
  const views::ProfileNodes& nodes_;
  views::LabelTable labels_;
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, uint32_t> by_label_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_location_;
  std::vector<uint32_t> path_, scratch_;
  uint32_t spawn_frame_ = 0, task_frame_ = UINT32_MAX, root_frame_ = UINT32_MAX;
};

// One "sampled" profile, written as samples come.
class SampledProfileWriter {
 public:
  SampledProfileWriter(std::ostream& out, const std::string& name, const std::string& unit) : out_(out) {
    out_ << "{\"type\":\"sampled\",\"name\":";
    WriteJsonString(out_, name);
    out_ << ",\"unit\":\"" << unit << "\",\"startValue\":0,\"samples\":[";
  }
  void Add(const std::vector<uint32_t>& stack, double weight) {
    out_ << (weights_.empty() ? "[" : ",[");
    for (size_t i = 0; i < stack.size(); ++i) out_ << (i ? "," : "") << stack[i];
    out_ << ']';
    weights_.push_back(weight);
    total_ += weight;
  }
  void Finish() {
    out_ << "],\"weights\":[";
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (i) out_ << ',';
      WriteNumber(out_, weights_[i]);
    }
    out_ << "],\"endValue\":";
    WriteNumber(out_, total_);
    out_ << '}';
  }

 private:
  std::ostream& out_;
  std::vector<double> weights_;
  double total_ = 0;
};

// Whether a timeline sample in `state` counts toward `metric`, and with what weight;
// false for metrics a sample's state does not decide.
bool TimelineWeight(const std::string& metric, uint64_t period_ns, wire::TimelineState state, double* weight) {
  if (metric == "samples") {
    *weight = 1;
    return state != wire::TIMELINE_IDLE;
  }
  *weight = static_cast<double>(period_ns);
  if (metric == "work") return state == wire::TIMELINE_WORKING || state == wire::TIMELINE_NOT_A_WORKER;
  if (metric == "overhead") return state == wire::TIMELINE_OVERHEAD;
  if (metric == "lock_wait") return state == wire::TIMELINE_LOCK_WAIT;
  return false;
}

bool TimelineDecides(const std::string& metric) {
  return metric == "samples" || metric == "work" || metric == "overhead" || metric == "lock_wait";
}

// "thread 3 (tid 1234, name) work": a ThreadValues entry's name; several threads are
// the group of the threads beyond the ones the file names one by one.
std::string ThreadValuesName(const profile::Profile& profile, const profile::ThreadValues& entry,
                             const std::string& metric) {
  if (entry.threads_size() != 1 || entry.threads(0) >= static_cast<uint32_t>(profile.threads_size())) {
    return "other threads (" + std::to_string(entry.threads_size()) + ") " + metric;
  }
  const profile::ThreadInfo& t = profile.threads(static_cast<int>(entry.threads(0)));
  std::string name = "thread " + std::to_string(t.thread_index()) + " (tid " + std::to_string(t.tid());
  if (!t.name().empty()) name += ", " + t.name();
  return name + ") " + metric;
}

// One ThreadValues entry's stored values by node, ascending: (node, stored metric
// values), only the nodes it has a value at. The columns are each sorted by node; one
// sort merges them.
std::vector<std::pair<uint32_t, std::vector<double>>> ThreadNodeValues(const profile::ThreadValues& entry,
                                                                       size_t stored, uint32_t node_count) {
  struct Cell {
    uint32_t node, metric;
    double value;
  };
  std::vector<Cell> cells;
  for (const profile::ThreadMetricColumn& column : entry.columns()) {
    if (column.metric() >= stored) continue;
    uint64_t node = 0;
    const int n = std::min(column.node_delta_size(), column.value_size());
    for (int i = 0; i < n; ++i) {
      node += column.node_delta(i);
      if (node >= node_count) break;
      cells.push_back({static_cast<uint32_t>(node), column.metric(), column.value(i)});
    }
  }
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) { return a.node < b.node; });
  std::vector<std::pair<uint32_t, std::vector<double>>> out;
  for (const Cell& c : cells) {
    if (out.empty() || out.back().first != c.node) out.emplace_back(c.node, std::vector<double>(stored, 0.0));
    out.back().second[c.metric] += c.value;
  }
  return out;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Status WriteSpeedscope(const AnalysisInput& input, const ExportOptions& options, std::ostream& out) {
  if (options.inverted) {
    return Status::Error("--inverted does not apply to speedscope files: open the file and use speedscope's "
                         "Sandwich view for the callers of a function; export without --inverted");
  }
  const profile::Profile& profile = input.profile;
  const views::ProfileNodes& nodes = input.nodes;
  const views::MetricColumns metrics = views::MetricColumns::Of(profile);
  auto resolved = views::ResolveMetric(metrics, options.metric);
  if (!resolved.ok()) return Status::Error(options.profile_path + ": " + resolved.status().message());
  const size_t m = *resolved;
  const views::MetricInfo& metric = metrics[m];
  if (metric.unit != "ns" && metric.unit != "count") {
    return Status::Error("metric '" + metric.name + "' is a ratio (" + metric.unit +
                         "), not a weight that adds up along a stack; choose a metric in ns or a count, "
                         "e.g. --metric work");
  }
  const std::string unit = metric.unit == "ns" ? "nanoseconds" : "none";
  const std::string program = Basename(profile.process().executable());

  out << "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"cilkprof "
      << CILKPROF_VERSION << "\",\"name\":";
  WriteJsonString(out, program + " (pid " + std::to_string(profile.process().pid()) + "), " + metric.name);
  out << ",\"activeProfileIndex\":0,\"profiles\":[";

  Frames frames(profile, nodes);
  std::vector<uint32_t> stack;
  {
    SampledProfileWriter all(out, "all threads (" + metric.name + ")", unit);
    std::vector<double> stored(metrics.stored()), every(metrics.size());
    for (uint32_t n = 0; n < nodes.size(); ++n) {
      nodes.Exclusive(n, stored.size(), stored.data());
      metrics.Expand(stored.data(), every.data());
      if (every[m] == 0) continue;
      frames.StackOf(n, stack);
      all.Add(stack, every[m]);
    }
    all.Finish();
  }

  if (profile.has_timeline() && TimelineDecides(metric.name)) {
    std::unordered_map<uint32_t, const profile::ThreadInfo*> threads;
    for (const profile::ThreadInfo& t : profile.threads()) threads[t.thread_index()] = &t;
    const uint64_t period = profile.process().period_ns();
    for (const profile::TimelineTrack& track : profile.timeline().tracks()) {
      std::string name = "thread " + std::to_string(track.thread_index()) + " (tid " + std::to_string(track.tid());
      if (auto it = threads.find(track.thread_index()); it != threads.end() && !it->second->name().empty()) {
        name += ", " + it->second->name();
      }
      if (track.worker_id_plus_1() != 0) name += ", worker " + std::to_string(track.worker_id_plus_1() - 1);
      name += ") " + metric.name + ", timeline samples in time order";
      out << ',';
      SampledProfileWriter thread(out, name, unit);
      const int events = std::min({track.time_ns_size(), track.kind_size(), track.state_size(), track.node_size()});
      for (int e = 0; e < events; ++e) {
        if (track.kind(e) != wire::TIMELINE_SAMPLE) continue;
        double weight = 0;
        if (!TimelineWeight(metric.name, period, track.state(e), &weight)) continue;
        const uint32_t node = track.node(e) < nodes.size() ? track.node(e) : 0;
        frames.StackOf(node, stack);
        thread.Add(stack, weight);
      }
      thread.Finish();
    }
  } else {
    std::vector<double> every(metrics.size());
    for (const profile::ThreadValues& entry : profile.thread_values()) {
      out << ',';
      SampledProfileWriter thread(out, ThreadValuesName(profile, entry, metric.name), unit);
      for (const auto& [node, stored] : ThreadNodeValues(entry, metrics.stored(), nodes.size())) {
        metrics.Expand(stored.data(), every.data());
        if (every[m] == 0) continue;
        frames.StackOf(node, stack);
        thread.Add(stack, every[m]);
      }
      thread.Finish();
    }
  }
  out << "],\"shared\":";
  frames.WriteShared(out);
  out << "}\n";
  return Status::Ok();
}

}  // namespace cilkprof::cli::exporters
