// `cilkprof run --timeline` end to end (issue 16): fib on two workers with every
// continuation handed to the other worker (CILK_FORCE_STEAL=1), through the real agent,
// runtime and aggregator, read back as a Profile.
//
// Deterministic by construction: forced steals happen at every spawn whose child ends
// (tens of thousands in fib(22)), so both workers work and steal in any schedule;
// the sample-count comparisons allow one in-flight sample per thread (a handler that
// charged its sample just before the final flush and pushed its event just after).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cilkprof/aggregator/profile_io.h"
#include "run_tool.h"

using cilkprof::cli::testing::RunTool;
using cilkprof::cli::testing::TempDir;
using cilkprof::cli::testing::ToolResult;

namespace cilkprof {
namespace {

constexpr int kFibN = 22;
const char* kFibResult = "17711";

struct FibRun {
  ToolResult tool;
  profile::Profile profile;
};

FibRun RunFib(const TempDir& dir, const std::vector<std::string>& options, const std::vector<std::string>& env) {
  FibRun run;
  const std::string out = dir.File("fib.cilkprof");
  std::vector<std::string> argv = {CILKPROF_TEST_CILKPROF, "run", "-q", "-f", "-o", out};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"--", CILKPROF_TEST_FIB, std::to_string(kFibN)});
  std::vector<std::string> full_env = {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT, "CILK_NWORKERS=2",
                                       "CILK_FORCE_STEAL=1"};
  full_env.insert(full_env.end(), env.begin(), env.end());
  run.tool = RunTool(argv, "", full_env);
  auto profile = aggregator::ReadProfileFile(out);
  if (profile.ok()) run.profile = std::move(*profile);
  return run;
}

bool PathHasFunction(const profile::Profile& p, uint32_t node, const std::string& name) {
  for (uint32_t n = node; n != 0; n = p.nodes(static_cast<int>(n)).parent()) {
    const uint32_t location = p.nodes(static_cast<int>(n)).location();
    if (location == 0) continue;
    for (const profile::SourceFrame& frame : p.locations(static_cast<int>(location)).frames()) {
      if (frame.function() == name) return true;
    }
  }
  return false;
}

TEST(TimelineE2E, FibOnTwoWorkersWithForcedSteals) {
  TempDir dir;
  // The default --workspan=separate: the timeline comes from the sampled run.
  const FibRun run = RunFib(dir, {"--timeline", "--period", "50us"}, {});
  ASSERT_EQ(run.tool.exit_code, 0) << run.tool.err;
  const profile::Profile& p = run.profile;
  ASSERT_TRUE(p.has_timeline()) << "no Profile.timeline";
  const profile::Timeline& timeline = p.timeline();
  EXPECT_EQ(timeline.start_unix_ns(), p.process().start_unix_ns());

  std::set<uint32_t> workers;
  uint64_t steals = 0, sample_events = 0, working = 0, working_in_fib = 0;
  const uint64_t duration = p.process().end_unix_ns() - p.process().start_unix_ns();
  for (const profile::TimelineTrack& track : timeline.tracks()) {
    const int n = track.time_ns_size();
    ASSERT_EQ(track.kind_size(), n);
    ASSERT_EQ(track.state_size(), n);
    ASSERT_EQ(track.node_size(), n);
    if (track.worker_id_plus_1() != 0) workers.insert(track.worker_id_plus_1());
    for (int i = 0; i < n; ++i) {
      if (i > 0) {
        ASSERT_LE(track.time_ns(i - 1), track.time_ns(i)) << "track of thread " << track.thread_index();
      }
      ASSERT_LE(track.time_ns(i), duration) << "an event after the process ended";
      if (track.kind(i) == wire::TIMELINE_STEAL) {
        ++steals;
        EXPECT_GE(track.node(i), 1u) << "a steal's victim is a worker id + 1";
        EXPECT_LE(track.node(i), 2u);
        EXPECT_NE(track.node(i), track.worker_id_plus_1()) << "a worker steals from the other";
      }
      if (track.kind(i) != wire::TIMELINE_SAMPLE) continue;
      ++sample_events;
      ASSERT_LT(track.node(i), static_cast<uint32_t>(p.nodes_size())) << "not a profile node";
      if (track.state(i) == wire::TIMELINE_WORKING) {
        ++working;
        if (PathHasFunction(p, track.node(i), "(anonymous namespace)::fib(int)")) ++working_in_fib;
      }
    }
  }
  EXPECT_EQ(workers, (std::set<uint32_t>{1, 2})) << "one track per worker";
  EXPECT_GT(steals, 0u) << "CILK_FORCE_STEAL makes every continuation a steal";
  ASSERT_GT(working, 20u);
  // The program is fib: its working samples are in fib (a few in main's cilk::run and
  // the result check may land outside, none of them steal time from fib's bulk).
  EXPECT_GE(working_in_fib, working * 9 / 10) << working_in_fib << " of " << working;
  // Every sample of the run is in the timeline, idle ones included (nothing dropped
  // with the default rings at 20 kHz).
  const uint64_t samples = p.totals().samples() + p.totals().idle_samples();
  const uint64_t threads = static_cast<uint64_t>(p.threads_size());
  if (timeline.dropped_events() == 0) {
    EXPECT_LE(sample_events, samples);
    EXPECT_GE(sample_events + threads, samples) << "samples missing from the timeline";
  }
  EXPECT_GT(p.totals().idle_samples(), 0u);
}

TEST(TimelineE2E, TinyRingsDropAndCountWithoutTouchingTheProgram) {
  TempDir dir;
  // 64-event rings, a flush at most every 100 ms, tens of thousands of steals.
  const FibRun run = RunFib(dir, {"--timeline", "--no-workspan"}, {"CILKPROF_TIMELINE_EVENTS=64"});
  ASSERT_EQ(run.tool.exit_code, 0) << run.tool.err;
  const profile::Profile& p = run.profile;
  ASSERT_TRUE(p.has_timeline());
  // fib checks its result itself (exit 1 on a mismatch) and prints it.
  EXPECT_NE(run.tool.out.find(kFibResult), std::string::npos) << run.tool.out;
  EXPECT_GT(p.timeline().dropped_events(), 0u);
  uint64_t dropped = 0;
  for (const profile::TimelineTrack& track : p.timeline().tracks()) dropped += track.dropped_events();
  EXPECT_EQ(dropped, p.timeline().dropped_events());
  // The profile itself is whole: samples were charged as ever.
  EXPECT_GT(p.totals().samples(), 0u);
}

TEST(TimelineE2E, NoTimelineWithoutTheOption) {
  TempDir dir;
  const FibRun run = RunFib(dir, {"--no-workspan"}, {});
  ASSERT_EQ(run.tool.exit_code, 0) << run.tool.err;
  EXPECT_FALSE(run.profile.has_timeline());
  EXPECT_GT(run.profile.totals().samples(), 0u);
}

}  // namespace
}  // namespace cilkprof
