// `cilkprof view timeline PROFILE [--buckets N] [--format text|json]` (issue 16;
// docs/USER_GUIDE.md "Timeline"): the recorded timeline (`cilkprof run --timeline`) in
// the terminal, one row per thread, one character per time bucket for the state the
// thread spent most of the bucket in (timeline_buckets.h), a time axis, the steals per
// bucket, and per thread the function that worked most in each quarter of the run.
// The picture of HPCToolkit's trace view and of a Perfetto track, without a browser.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <nlohmann/json.hpp>

#include "analysis_input.h"
#include "cilkprof/views/units.h"
#include "commands.h"
#include "progress.h"
#include "timeline_buckets.h"

namespace cilkprof::cli {
namespace {

constexpr size_t kSegments = 4;        // "top function" columns: quarters of the run
constexpr size_t kTickEvery = 10;      // buckets between two ticks of the time axis
constexpr size_t kMinBuckets = 10;
constexpr size_t kMaxNameWidth = 24;   // longer thread names are cut
constexpr const char* kStealsRow = "steals";

// The terminal's width, or 80 columns when standard output is not one.
size_t OutputColumns() {
  struct winsize size {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string Fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text + std::string(width - text.size(), ' ');
  if (width <= 3) return text.substr(0, width);
  return text.substr(0, width - 3) + "...";
}

// A C++ name shortened for a table cell: templates and parameter lists dropped, then
// the last two components: "(anonymous namespace)::fib(int)" -> "fib",
// "cilk::scope::spawn<...>(...)" -> "scope::spawn". The json form has the full names.
std::string ShortName(const std::string& name) {
  std::string bare;
  int depth = 0;
  for (const char c : name) {
    if (c == '<' || c == '(') {
      ++depth;
    } else if ((c == '>' || c == ')') && depth > 0) {
      --depth;
    } else if (depth == 0) {
      bare += c;
    }
  }
  std::vector<std::string> parts;
  for (size_t at = 0; at <= bare.size();) {
    const size_t next = std::min(bare.find("::", at), bare.size());
    if (next > at) parts.push_back(bare.substr(at, next - at));
    at = next + 2;
  }
  while (!parts.empty() && parts.back().find_first_not_of(' ') == std::string::npos) parts.pop_back();
  if (parts.empty()) return name;
  return parts.size() == 1 ? parts.back() : parts[parts.size() - 2] + "::" + parts.back();
}

std::string Seconds(uint64_t ns) { return views::FormatDuration(static_cast<double>(ns) / 1e9); }

// The time axis: labels at the ticks they fit above, then the ticks.
std::string Axis(const timeline::TimelineGrid& grid, size_t buckets, size_t indent) {
  std::string labels(indent, ' '), ticks(indent, ' ');
  for (size_t b = 0; b < buckets; ++b) {
    ticks += b % kTickEvery == 0 ? '|' : ' ';
    if (b % kTickEvery != 0) continue;
    const std::string label = Seconds(grid.BucketStart(b));
    const size_t at = indent + b;
    if (labels.size() > at || at + label.size() > indent + buckets + 8) continue;  // no room
    labels += std::string(at - labels.size(), ' ') + label;
  }
  while (ticks.back() == ' ') ticks.pop_back();
  return labels + "\n" + ticks + "\n";
}

std::string StealsRow(const timeline::TimelineGrid& grid) {
  std::string row;
  for (const uint32_t count : grid.steals) row += count == 0 ? ' ' : count < 10 ? static_cast<char>('0' + count) : '+';
  return row;
}

std::string RenderText(const ViewArgs& args, const profile::Profile& profile, const timeline::TimelineGrid& grid,
                       size_t buckets, size_t name_width) {
  size_t workers = 0;
  for (const auto& track : grid.tracks) workers += track.worker_id_plus_1 > 0 ? 1 : 0;
  const size_t others = grid.tracks.size() - workers;
  std::string out = "Timeline of " + args.profile + " (" + profile.process().executable() + ", pid " +
                    std::to_string(profile.process().pid()) + "): " + std::to_string(workers) +
                    (workers == 1 ? " worker, " : " workers, ") + std::to_string(others) +
                    (others == 1 ? " other thread" : " other threads") + "; " + Seconds(grid.span.start_ns) + " to " +
                    Seconds(grid.span.end_ns) + " after the start in " + std::to_string(buckets) + " buckets of " +
                    Seconds(grid.bucket_ns) + "\n";
  out += "Each character is the state a thread spent most of the bucket in: '#' working  '.' idle\n"
         "'o' overhead  'L' lock wait  '-' not a worker  ' ' no samples. Steals: per bucket, '+' for 10 or more.\n\n";
  out += Axis(grid, buckets, name_width);
  auto line = [](std::string text) {
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  for (const auto& track : grid.tracks) out += line(Fit(track.name, name_width) + track.Row());
  out += line(Fit(kStealsRow, name_width) + StealsRow(grid));
  if (grid.dropped_events > 0) {
    out += "\n" + std::to_string(grid.dropped_events) +
           " events were dropped (the agents' timeline buffers were full): their time shows as blanks\n";
  }

  // The function with the most working time per thread and quarter, and its share of the
  // thread's working time there.
  const size_t column = std::max<size_t>((buckets + 1) / grid.segment_count, 12);  // as wide as the rows
  out += "\nTop function by working time (share of the thread's working time) in each quarter\n"
         "(names shortened; --format json has them in full):\n";
  out += std::string(name_width, ' ');
  for (size_t s = 0; s < grid.segment_count; ++s) {
    out += Fit(Seconds(grid.SegmentStart(s)) + "-" + Seconds(grid.SegmentStart(s + 1)), column - 1) + " ";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (const auto& track : grid.tracks) {
    std::string line = Fit(track.name, name_width);
    for (const timeline::SegmentTop& top : track.segments) {
      std::string cell = "-";
      if (!top.function.empty()) {
        const std::string share = std::to_string(static_cast<int>(
                                      std::lround(100.0 * static_cast<double>(top.working_ns) /
                                                  static_cast<double>(std::max<uint64_t>(top.segment_working_ns, 1))))) +
                                  "%";
        cell = Fit(ShortName(top.function), column - share.size() - 2);  // a space before the share, one after
        while (!cell.empty() && cell.back() == ' ') cell.pop_back();
        cell += " " + share;
      }
      line += Fit(cell, column);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string RenderJson(const ViewArgs& args, const profile::Profile& profile, const timeline::TimelineGrid& grid) {
  using nlohmann::json;
  json doc;
  doc["profile"] = args.profile;
  doc["executable"] = profile.process().executable();
  doc["pid"] = profile.process().pid();
  doc["period_ns"] = timeline::PeriodOf(profile);
  doc["start_ns"] = grid.span.start_ns;
  doc["end_ns"] = grid.span.end_ns;
  doc["bucket_ns"] = grid.bucket_ns;
  doc["buckets"] = grid.steals.size();
  doc["legend"] = {{"#", "working"},      {".", "idle"},    {"o", "overhead"},  {"L", "lock_wait"},
                   {"-", "not_a_worker"}, {"?", "unknown"}, {" ", "no samples"}};
  doc["steals"] = grid.steals;
  doc["dropped_events"] = grid.dropped_events;
  json tracks = json::array();
  for (const auto& track : grid.tracks) {
    json entry;
    entry["name"] = track.name;
    entry["thread_index"] = track.thread_index;
    entry["tid"] = track.tid;
    entry["worker"] = track.worker_id_plus_1 > 0 ? json(track.worker_id_plus_1 - 1) : json(nullptr);
    entry["row"] = track.Row();
    json time = json::object(), samples = json::object();
    for (size_t s = 1; s < timeline::kStateCount; ++s) {
      const auto state = static_cast<timeline::State>(s);
      time[timeline::StateName(state)] = track.totals[s];
      samples[timeline::StateName(state)] = track.samples[s];
    }
    entry["time_ns"] = time;
    entry["samples"] = samples;
    entry["steals"] = track.steals;
    entry["sync_waits"] = track.sync_waits;
    entry["dropped_events"] = track.dropped_events;
    json segments = json::array();
    for (size_t s = 0; s < track.segments.size(); ++s) {
      const timeline::SegmentTop& top = track.segments[s];
      segments.push_back({{"start_ns", grid.SegmentStart(s)},
                          {"end_ns", grid.SegmentStart(s + 1)},
                          {"function", top.function.empty() ? json(nullptr) : json(top.function)},
                          {"working_ns", top.working_ns},
                          {"thread_working_ns", top.segment_working_ns}});
    }
    entry["segments"] = segments;
    tracks.push_back(std::move(entry));
  }
  doc["tracks"] = tracks;
  return doc.dump(2) + "\n";
}

}  // namespace

int RunTimelineView(const ViewArgs& args) {
  if (args.format == "csv") {
    PrintError("view timeline prints text or json; use --format text or --format json");
    return kExitUsage;
  }
  Progress progress(true);
  std::optional<AnalysisInput> input = LoadForAnalysis(args.profile, progress);
  if (!input) return kExitFailure;
  progress.Clear();
  const profile::Profile& profile = input->profile;
  if (!profile.has_timeline()) {
    PrintError("no timeline in " + args.profile + ": record one with cilkprof run --timeline");
    return kExitFailure;
  }
  size_t name_width = std::string(kStealsRow).size();
  for (const auto& track : profile.timeline().tracks()) {
    name_width = std::max(name_width, std::min(timeline::TrackName(profile, track).size(), kMaxNameWidth));
  }
  name_width += 2;
  const size_t columns = OutputColumns();
  const size_t buckets =
      args.buckets.value_or(columns > name_width + kMinBuckets ? columns - name_width - 1 : kMinBuckets);
  timeline::ContextNames names(profile, input->nodes);
  const timeline::TimelineGrid grid = timeline::BucketTimeline(profile, names, buckets, kSegments);
  const std::string out =
      args.format == "json" ? RenderJson(args, profile, grid) : RenderText(args, profile, grid, buckets, name_width);
  return WriteStdout(out, "the view");
}

}  // namespace cilkprof::cli
