// The timeline's consumers on a synthetic timeline (timeline_test_profile.h): samples
// merged into slices, sync waits, steals, the buckets of `view timeline`, and the
// chrome-trace export's events.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis_input.h"
#include "export/exporters.h"
#include "export/timeline_slices.h"
#include "timeline_buckets.h"
#include "timeline_test_profile.h"

namespace cilkprof::cli::timeline {
namespace {

using timeline_testing::TimelineProfile;
constexpr uint64_t kMs = 1'000'000;

struct Replayed {
  std::vector<Slice> slices;
  std::vector<SyncWait> waits;
  std::vector<Steal> steals;
};

Replayed Replay(const profile::TimelineTrack& track, uint64_t period = kMs) {
  Replayed out;
  TrackVisitor visitor;
  visitor.slice = [&](const Slice& s) { out.slices.push_back(s); };
  visitor.sync_wait = [&](const SyncWait& w) { out.waits.push_back(w); };
  visitor.steal = [&](const Steal& s) { out.steals.push_back(s); };
  SliceTrack(track, period, visitor);
  return out;
}

void ExpectSlice(const Slice& s, double start_ms, double end_ms, State state, uint32_t node, uint32_t samples) {
  EXPECT_EQ(s.start_ns, static_cast<uint64_t>(start_ms * kMs));
  EXPECT_EQ(s.end_ns, static_cast<uint64_t>(end_ms * kMs));
  EXPECT_EQ(s.state, state);
  EXPECT_EQ(s.node, node);
  EXPECT_EQ(s.samples, samples);
}

TEST(TimelineSlices, MergesSamplesAndCutsAtSyncWaitsAndGaps) {
  const profile::Profile p = TimelineProfile();
  const Replayed worker0 = Replay(p.timeline().tracks(0));
  ASSERT_EQ(worker0.slices.size(), 5u);
  ExpectSlice(worker0.slices[0], 0, 4, wire::TIMELINE_WORKING, 3, 4);
  ExpectSlice(worker0.slices[1], 4, 5, wire::TIMELINE_WORKING, 2, 1);
  ExpectSlice(worker0.slices[2], 5.5, 7, wire::TIMELINE_IDLE, 0, 2);
  ExpectSlice(worker0.slices[3], 7.5, 8, wire::TIMELINE_WORKING, 2, 1);
  ExpectSlice(worker0.slices[4], 11, 12, wire::TIMELINE_WORKING, 2, 1);
  ASSERT_EQ(worker0.waits.size(), 1u);
  EXPECT_EQ(worker0.waits[0].begin_ns, 5 * kMs + kMs / 2);
  EXPECT_EQ(worker0.waits[0].end_ns, 7 * kMs + kMs / 2);
  EXPECT_TRUE(worker0.waits[0].closed);
  EXPECT_TRUE(worker0.steals.empty());
}

TEST(TimelineSlices, StealStartsTheNextSlice) {
  const profile::Profile p = TimelineProfile();
  const Replayed worker1 = Replay(p.timeline().tracks(1));
  ASSERT_EQ(worker1.slices.size(), 4u);
  ExpectSlice(worker1.slices[0], 0, 2, wire::TIMELINE_IDLE, 0, 2);
  ExpectSlice(worker1.slices[1], 2.5, 5, wire::TIMELINE_WORKING, 3, 3);
  ExpectSlice(worker1.slices[2], 5, 6, wire::TIMELINE_OVERHEAD, 2, 1);
  ExpectSlice(worker1.slices[3], 6, 8, wire::TIMELINE_LOCK_WAIT, 2, 2);
  ASSERT_EQ(worker1.steals.size(), 1u);
  EXPECT_EQ(worker1.steals[0].time_ns, 2 * kMs + kMs / 2);
  EXPECT_EQ(worker1.steals[0].victim_worker_plus_1, 1u);
}

TEST(TimelineSlices, NestedAndUnendedSyncWaitsAndTimesOutOfOrder) {
  profile::TimelineTrack track;
  auto add = [&](uint64_t ns, wire::TimelineEventKind kind, wire::TimelineState state = wire::TIMELINE_STATE_UNKNOWN) {
    track.add_time_ns(ns);
    track.add_kind(kind);
    track.add_state(state);
    track.add_node(0);
  };
  add(10 * kMs, wire::TIMELINE_SYNC_WAIT_END);  // no wait open: ignored
  add(11 * kMs, wire::TIMELINE_SYNC_WAIT_BEGIN);
  add(12 * kMs, wire::TIMELINE_SYNC_WAIT_BEGIN);
  add(13 * kMs, wire::TIMELINE_SYNC_WAIT_END);
  add(9 * kMs, wire::TIMELINE_SAMPLE, wire::TIMELINE_IDLE);  // before the previous event: taken at 13 ms
  add(15 * kMs, wire::TIMELINE_SAMPLE, wire::TIMELINE_IDLE);
  const Replayed r = Replay(track);
  ASSERT_EQ(r.waits.size(), 2u);
  EXPECT_EQ(r.waits[0].begin_ns, 12 * kMs);  // the inner one ends first
  EXPECT_EQ(r.waits[0].end_ns, 13 * kMs);
  EXPECT_EQ(r.waits[0].depth, 1u);
  EXPECT_TRUE(r.waits[0].closed);
  EXPECT_EQ(r.waits[1].begin_ns, 11 * kMs);  // never ended: closed at the last event
  EXPECT_EQ(r.waits[1].end_ns, 15 * kMs);
  EXPECT_EQ(r.waits[1].depth, 0u);
  EXPECT_FALSE(r.waits[1].closed);
  ASSERT_EQ(r.slices.size(), 2u);  // 15 ms is more than 1.5 periods after 13 ms
  ExpectSlice(r.slices[0], 13, 13, wire::TIMELINE_IDLE, 0, 1);
  ExpectSlice(r.slices[1], 14, 15, wire::TIMELINE_IDLE, 0, 1);
}

TEST(TimelineSlices, ShortArraysEndTheTrack) {
  profile::TimelineTrack track;
  for (int i = 1; i <= 3; ++i) {
    track.add_time_ns(static_cast<uint64_t>(i) * kMs);
    track.add_kind(wire::TIMELINE_SAMPLE);
    track.add_state(wire::TIMELINE_WORKING);
  }
  track.add_node(5);
  track.add_node(5);  // the third sample has no node: the track ends after two
  const Replayed r = Replay(track);
  ASSERT_EQ(r.slices.size(), 1u);
  ExpectSlice(r.slices[0], 0, 2, wire::TIMELINE_WORKING, 5, 2);
}

TEST(TimelineNames, LeafFunctionAndLogicalPath) {
  const profile::Profile p = TimelineProfile();
  const views::ProfileNodes nodes = views::ProfileNodes::Of(p);
  ContextNames names(p, nodes);
  EXPECT_EQ(names.Function(0), "");
  EXPECT_EQ(names.Function(3), "helper()");  // the innermost (inlined) frame
  EXPECT_EQ(names.Function(2), "compute(int)");
  EXPECT_EQ(names.Function(99), "");  // out of range
  EXPECT_EQ(names.Path(3, 8), "main > compute(int) > [spawn] leaf_work(int) > helper()");
  EXPECT_EQ(names.Path(3, 2), "... > [spawn] leaf_work(int) > helper()");
  EXPECT_EQ(TrackName(p, p.timeline().tracks(0)), "worker 0");
  EXPECT_EQ(TrackName(p, p.timeline().tracks(2)), "main");
}

TEST(TimelineBuckets, DominantStatePerBucketAndSteals) {
  const profile::Profile p = TimelineProfile();
  const views::ProfileNodes nodes = views::ProfileNodes::Of(p);
  ContextNames names(p, nodes);
  const TimelineGrid grid = BucketTimeline(p, names, 12, 4);
  EXPECT_EQ(grid.span.start_ns, 0u);
  EXPECT_EQ(grid.span.end_ns, 12 * kMs);
  EXPECT_EQ(grid.bucket_ns, kMs);
  ASSERT_EQ(grid.tracks.size(), 3u);
  EXPECT_EQ(grid.tracks[0].name, "worker 0");
  EXPECT_EQ(grid.tracks[0].Row(), "#####..#   #");
  EXPECT_EQ(grid.tracks[1].Row(), "..###oLL    ");
  EXPECT_EQ(grid.tracks[2].name, "main");
  EXPECT_EQ(grid.tracks[2].Row(), "------------");
  EXPECT_EQ(grid.steals, (std::vector<uint32_t>{0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(grid.tracks[0].sync_waits, 1u);
  EXPECT_EQ(grid.tracks[1].steals, 1u);
  EXPECT_EQ(grid.tracks[0].samples[wire::TIMELINE_WORKING], 7u);
  EXPECT_EQ(grid.tracks[0].totals[wire::TIMELINE_WORKING], 6'500'000u);  // 4 + 1 + 0.5 + 1 ms
  // Quarters of 3 ms: worker 0 works in helper() for all of [0, 3); in [3, 6) 1 ms in
  // helper() and 1 ms in compute(int): a tie, taken by the first name.
  EXPECT_EQ(grid.tracks[0].segments[0].function, "helper()");
  EXPECT_EQ(grid.tracks[0].segments[0].working_ns, 3 * kMs);
  EXPECT_EQ(grid.tracks[0].segments[1].function, "compute(int)");
  EXPECT_EQ(grid.tracks[0].segments[1].working_ns, kMs);
  EXPECT_EQ(grid.tracks[0].segments[1].segment_working_ns, 2 * kMs);
  EXPECT_EQ(grid.tracks[2].segments[0].function, "");  // not a worker: no working time
}

TEST(TimelineBuckets, CoarseBucketsTakeTheStateWithMostTime) {
  const profile::Profile p = TimelineProfile();
  const views::ProfileNodes nodes = views::ProfileNodes::Of(p);
  ContextNames names(p, nodes);
  const TimelineGrid grid = BucketTimeline(p, names, 3, 1);  // 4 ms each
  // worker 0 in [4, 8): working 1.5 ms, idle 1.5 ms: the tie goes to working.
  EXPECT_EQ(grid.tracks[0].buckets[1][wire::TIMELINE_WORKING], 1'500'000u);
  EXPECT_EQ(grid.tracks[0].buckets[1][wire::TIMELINE_IDLE], 1'500'000u);
  EXPECT_EQ(grid.tracks[0].Row(), "###");
  // worker 1 in [4, 8): working 1, overhead 1, lock wait 2 ms.
  EXPECT_EQ(grid.tracks[1].Row(), ".L ");
}

TEST(TimelineBuckets, DominantCharTies) {
  StateTimes times{};
  EXPECT_EQ(DominantChar(times), ' ');
  times[wire::TIMELINE_IDLE] = 5;
  times[wire::TIMELINE_OVERHEAD] = 5;
  EXPECT_EQ(DominantChar(times), 'o');
  times[wire::TIMELINE_LOCK_WAIT] = 5;
  EXPECT_EQ(DominantChar(times), 'L');
  times[wire::TIMELINE_IDLE] = 6;
  EXPECT_EQ(DominantChar(times), '.');
}

// The chrome-trace events of the synthetic timeline, parsed back.
nlohmann::json ChromeTrace(const profile::Profile& p) {
  AnalysisInput input;
  input.profile = p;
  input.nodes = views::ProfileNodes::Of(p);
  exporters::ExportOptions options;
  options.profile_path = "t.cilkprof";
  std::ostringstream out;
  const Status written = exporters::WriteChromeTrace(input, options, out);
  EXPECT_TRUE(written.ok()) << written.message();
  return nlohmann::json::parse(out.str());
}

TEST(ChromeTrace, SlicesSyncWaitsStealsAndNames) {
  const nlohmann::json trace = ChromeTrace(TimelineProfile());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["period_ns"], kMs);
  std::map<std::pair<uint64_t, std::string>, std::vector<nlohmann::json>> by_tid_phase;
  for (const auto& event : trace["traceEvents"]) {
    EXPECT_EQ(event["pid"], 4242);
    by_tid_phase[{event["tid"].get<uint64_t>(), event["ph"].get<std::string>()}].push_back(event);
  }
  auto events = [&](uint64_t tid, const char* phase) -> std::vector<nlohmann::json>& {
    return by_tid_phase[{tid, phase}];
  };
  // Names: the process, the threads, workers sorted first.
  const auto& process = events(0, "M");
  ASSERT_EQ(process.size(), 1u);
  EXPECT_EQ(process[0]["args"]["name"], "prog");
  std::map<uint64_t, std::pair<std::string, int>> threads;
  for (uint64_t tid : {100, 101, 102}) {
    for (const auto& m : events(tid, "M")) {
      if (m["name"] == "thread_name") threads[tid].first = m["args"]["name"];
      if (m["name"] == "thread_sort_index") threads[tid].second = m["args"]["sort_index"];
    }
  }
  EXPECT_EQ(threads[101], std::make_pair(std::string("worker 0"), 0));
  EXPECT_EQ(threads[102], std::make_pair(std::string("worker 1"), 1));
  EXPECT_EQ(threads[100], std::make_pair(std::string("main"), 2));

  // worker 0: the five slices and the sync wait, in µs with three decimals.
  const auto& x0 = events(101, "X");
  ASSERT_EQ(x0.size(), 6u);
  EXPECT_EQ(x0[0]["name"], "helper()");
  EXPECT_EQ(x0[0]["cat"], "working");
  EXPECT_EQ(x0[0]["ts"], 0.0);
  EXPECT_EQ(x0[0]["dur"], 4000.0);
  EXPECT_EQ(x0[0]["args"]["samples"], 4);
  EXPECT_EQ(x0[0]["args"]["path"], "main > compute(int) > [spawn] leaf_work(int) > helper()");
  EXPECT_EQ(x0[2]["name"], "idle");  // no context: named by its state
  EXPECT_EQ(x0[2]["cat"], "idle");
  EXPECT_EQ(x0[2]["ts"], 5500.0);
  EXPECT_FALSE(x0[2]["args"].contains("path"));
  EXPECT_EQ(x0[3]["name"], "sync wait");
  EXPECT_EQ(x0[3]["ts"], 5500.0);
  EXPECT_EQ(x0[3]["dur"], 2000.0);
  EXPECT_EQ(x0[5]["ts"], 11000.0);

  // The steal: an instant on the thief, a flow from the victim to the thief.
  const auto& instants = events(102, "i");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0]["name"], "steal from worker 0");
  EXPECT_EQ(instants[0]["ts"], 2500.0);
  ASSERT_EQ(events(101, "s").size(), 1u);
  ASSERT_EQ(events(102, "f").size(), 1u);
  EXPECT_EQ(events(101, "s")[0]["id"], events(102, "f")[0]["id"]);
  EXPECT_EQ(events(102, "f")[0]["ts"], 2500.0);
  // worker 1's lock wait, and the main thread's one merged slice.
  EXPECT_EQ(events(102, "X").back()["cat"], "lock_wait");
  ASSERT_EQ(events(100, "X").size(), 1u);
  EXPECT_EQ(events(100, "X")[0]["dur"], 12000.0);
  EXPECT_EQ(events(100, "X")[0]["cat"], "not_a_worker");
}

TEST(ChromeTrace, EscapesNamesAndKeepsNanoseconds) {
  profile::Profile p = TimelineProfile();
  p.mutable_locations(2)->mutable_frames(0)->set_function("compute<\"q\\t\">\n");
  p.mutable_timeline()->mutable_tracks(0)->set_time_ns(4, 5 * kMs + 7);  // the slice [4000.007, 5000.007] µs
  const nlohmann::json trace = ChromeTrace(p);
  bool found = false;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["tid"] == 101 && event["ts"] == 4000.007) {
      EXPECT_EQ(event["name"], "compute<\"q\\t\">\n");
      EXPECT_EQ(event["dur"], 1000.0);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ChromeTrace, RefusesAProfileWithoutTimeline) {
  AnalysisInput input;
  input.profile = timeline_testing::ProfileWithoutTimeline();
  input.nodes = views::ProfileNodes::Of(input.profile);
  exporters::ExportOptions options;
  options.profile_path = "old.cilkprof";
  std::ostringstream out;
  const Status written = exporters::WriteChromeTrace(input, options, out);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.message(), "no timeline in old.cilkprof: record one with cilkprof run --timeline");
}

}  // namespace
}  // namespace cilkprof::cli::timeline
