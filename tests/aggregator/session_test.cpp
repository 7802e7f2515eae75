// Session: merging per-thread CCTs, increments across flushes, schema violations,
// and the profile it builds.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "profile_paths.h"
#include "wire_builders.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using Paths = std::map<std::string, std::vector<double>>;

profile::Profile Build(const Session& session,
                       std::map<std::pair<std::string, uint64_t>, int>* calls = nullptr) {
  FakeSymbolSource symbols(calls);
  profile::Profile p = session.BuildProfile(symbols, 2000000000);
  // Whatever the session builds must pass the reader's validation.
  auto reread = DecodeProfileFile("built", EncodeProfileFile(p));
  EXPECT_TRUE(reread.ok()) << reread.status().message();
  return p;
}

// Two threads whose CCTs share a prefix, in one Delta.
wire::AgentMessage TwoThreadDelta() {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/bin/app", "BID");
  AddModule(d, 2, "/lib/libm.so");
  wire::ThreadDelta* a = AddThread(d, 100, 0, "main");
  AddNode(a, 1, 0, 1, 0x10);
  AddNode(a, 2, 1, 1, 0x20);
  AddNode(a, 3, 2, 1, 0x30);
  AddMetrics(a, 3, {2, 2000});
  AddMetrics(a, 2, {1, 1000});
  AddCounters(a, 3, 0, 3000);
  wire::ThreadDelta* b = AddThread(d, 101, 1, "worker");
  AddNode(b, 5, 0, 1, 0x10);                  // same path as a's node 1
  AddNode(b, 6, 5, 1, 0x20);                  // same as a's node 2
  AddNode(b, 7, 6, 2, 0x40, wire::EDGE_SPAWN);
  AddNode(b, 8, 0, 1, 0x20);                  // same address, other parent: another node
  AddMetrics(b, 6, {3, 3000});
  AddMetrics(b, 7, {1, 500});
  AddMetrics(b, 8, {1, 100});
  AddCounters(b, 5, 1, 3600);
  return m;
}

TEST(SessionTest, MergesTwoThreadsIntoTheExactTree) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  ASSERT_TRUE(s.Apply(TwoThreadDelta()).ok());
  ASSERT_TRUE(s.Apply(Goodbye()).ok());
  std::map<std::pair<std::string, uint64_t>, int> calls;
  const profile::Profile p = Build(s, &calls);

  const Paths expected = {
      {"<root>", {}},
      {"<root> > app:0x10", {}},
      {"<root> > app:0x10 > app:0x20", {4, 4000}},
      {"<root> > app:0x10 > app:0x20 > app:0x30", {2, 2000}},
      {"<root> > app:0x10 > app:0x20 > spawn:libm.so:0x40", {1, 500}},
      {"<root> > app:0x20", {1, 100}},
  };
  EXPECT_EQ(PathsOf(p), expected);
  EXPECT_EQ(p.nodes_size(), 6);
  for (int i = 1; i < p.nodes_size(); ++i) EXPECT_LT(p.nodes(i).parent(), uint32_t(i));

  // Each distinct location symbolized exactly once.
  const std::map<std::pair<std::string, uint64_t>, int> once = {
      {{"/bin/app", 0x10}, 1}, {{"/bin/app", 0x20}, 1}, {{"/bin/app", 0x30}, 1},
      {{"/lib/libm.so", 0x40}, 1}};
  EXPECT_EQ(calls, once);
  EXPECT_EQ(p.locations_size(), 5);

  ASSERT_EQ(p.modules_size(), 3);
  EXPECT_EQ(p.modules(0).path(), "");
  EXPECT_EQ(p.modules(1).path(), "/bin/app");
  EXPECT_EQ(p.modules(1).build_id(), "BID");

  ASSERT_EQ(p.threads_size(), 2);
  EXPECT_EQ(p.threads(0).name(), "main");
  EXPECT_EQ(p.threads(0).tid(), 100u);
  EXPECT_EQ(p.threads(1).name(), "worker");
  EXPECT_EQ(p.threads(1).counters().samples(), 5u);
  EXPECT_EQ(p.threads(1).counters().cpu_ns(), 3600u);
  EXPECT_EQ(p.totals().samples(), 8u);
  EXPECT_EQ(p.totals().partial_unwinds(), 1u);
  EXPECT_EQ(p.totals().connections_dropped(), 0u);

  EXPECT_EQ(p.format_version(), kProfileFormatVersion);
  EXPECT_EQ(p.process().pid(), 42u);
  EXPECT_EQ(p.process().end_reason(), "exit");
  EXPECT_EQ(p.process().end_unix_ns(), 3000000000u);
  ASSERT_EQ(p.metrics_size(), 2);
  EXPECT_EQ(p.metrics(1).name(), "work");
  // The symbol source's warnings reach the profile.
  ASSERT_EQ(p.process().warnings_size(), 1);
  EXPECT_EQ(p.process().warnings(0), "fake symbolizer in use");
}

TEST(SessionTest, DeltasAddIncrementsAcrossFlushes) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(7)).ok());
  for (int flush = 1; flush <= 3; ++flush) {
    wire::AgentMessage m;
    wire::Delta* d = m.mutable_delta();
    if (flush == 1) AddModule(d, 1, "/bin/app");
    wire::ThreadDelta* t = AddThread(d, 100, 0, flush == 3 ? "renamed" : "main");
    if (flush == 1) AddNode(t, 1, 0, 1, 0x10);
    if (flush == 2) AddNode(t, 2, 1, 1, 0x20);
    AddMetrics(t, 1, {1.0 * flush, 10.0 * flush});
    if (flush >= 2) AddMetrics(t, 2, {1, 5});
    AddCounters(t, 2, flush == 3 ? 1 : 0, 100);
    if (flush == 3) t->set_exited(true);
    ASSERT_TRUE(s.Apply(m).ok()) << "flush " << flush;
  }
  EXPECT_EQ(s.deltas_applied(), 3u);
  const profile::Profile p = Build(s);
  const Paths expected = {{"<root>", {}},
                          {"<root> > app:0x10", {6, 60}},
                          {"<root> > app:0x10 > app:0x20", {2, 10}}};
  EXPECT_EQ(PathsOf(p), expected);
  ASSERT_EQ(p.threads_size(), 1);
  EXPECT_EQ(p.threads(0).name(), "renamed");
  EXPECT_TRUE(p.threads(0).exited());
  EXPECT_EQ(p.threads(0).counters().samples(), 6u);
  EXPECT_EQ(p.threads(0).counters().cpu_ns(), 300u);
  EXPECT_EQ(p.totals().partial_unwinds(), 1u);
  EXPECT_EQ(p.process().end_reason(), "connection lost");  // no Goodbye
  EXPECT_EQ(p.process().end_unix_ns(), 2000000000u);
}

TEST(SessionTest, SameModuleUnderTwoIdsIsOneModule) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(7)).ok());
  wire::AgentMessage m;
  AddModule(m.mutable_delta(), 1, "/lib/plugin.so", "B1");
  AddModule(m.mutable_delta(), 2, "/lib/plugin.so", "B1");  // dlclose + dlopen again
  AddModule(m.mutable_delta(), 3, "/lib/plugin.so", "B2");  // rebuilt: another module
  wire::ThreadDelta* t = AddThread(m.mutable_delta(), 1, 0);
  AddNode(t, 1, 0, 1, 0x10);
  AddNode(t, 2, 0, 2, 0x10);
  AddNode(t, 3, 0, 3, 0x10);
  AddMetrics(t, 1, {1});
  AddMetrics(t, 2, {1});
  AddMetrics(t, 3, {1});
  ASSERT_TRUE(s.Apply(m).ok());
  const profile::Profile p = Build(s);
  EXPECT_EQ(p.modules_size(), 3);  // unknown, B1, B2
  EXPECT_EQ(p.nodes_size(), 3);    // root, B1:0x10 (2 samples), B2:0x10
  EXPECT_EQ(p.nodes(1).exclusive(0), 2);
}

TEST(SessionTest, PartialUnwindMarkersAndAbsoluteAddressesMerge) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(7)).ok());
  wire::AgentMessage m;
  for (uint32_t tid : {1u, 2u}) {
    wire::ThreadDelta* t = AddThread(m.mutable_delta(), tid, tid);
    AddNode(t, 1, 0, 0, 0, wire::EDGE_CALL, wire::FRAME_PARTIAL_UNWIND);
    AddNode(t, 2, 1, 0, 0xdeadbeef);  // module 0: an address outside any module
    AddMetrics(t, 2, {1});
  }
  ASSERT_TRUE(s.Apply(m).ok());
  const profile::Profile p = Build(s);
  const Paths expected = {{"<root>", {}},
                          {"<root> > <partial unwind>", {}},
                          {"<root> > <partial unwind> > 0xdeadbeef", {2}}};
  EXPECT_EQ(PathsOf(p), expected);
  EXPECT_EQ(p.nodes(1).location(), 0u);
}

TEST(SessionTest, MetricsOnTheThreadRootGoToTheProgramRoot) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(7)).ok());
  wire::AgentMessage m;
  AddMetrics(AddThread(m.mutable_delta(), 1, 0), 0, {1, 2});
  ASSERT_TRUE(s.Apply(m).ok());
  EXPECT_EQ(PathsOf(Build(s)), (Paths{{"<root>", {1, 2}}}));
}

// A malformed delta is refused as a whole; what came before is kept.
void ExpectRefused(const wire::AgentMessage& bad, const std::string& needle) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  ASSERT_TRUE(s.Apply(TwoThreadDelta()).ok());
  const Paths before = PathsOf(Build(s));
  const Status status = s.Apply(bad);
  ASSERT_FALSE(status.ok()) << needle;
  EXPECT_NE(status.message().find(needle), std::string::npos) << status.message();
  EXPECT_EQ(PathsOf(Build(s)), before);
  // Sticky: the connection is done.
  EXPECT_FALSE(s.Apply(Goodbye()).ok());
  EXPECT_EQ(s.deltas_applied(), 1u);
}

wire::AgentMessage DeltaWithValidPartThen(void (*spoil)(wire::ThreadDelta*, wire::Delta*)) {
  wire::AgentMessage m;
  wire::ThreadDelta* good = AddThread(m.mutable_delta(), 100, 0);
  AddNode(good, 20, 3, 1, 0x99);
  AddMetrics(good, 20, {100, 100});  // must not be merged
  wire::ThreadDelta* t = AddThread(m.mutable_delta(), 101, 1);
  spoil(t, m.mutable_delta());
  return m;
}

TEST(SessionTest, UnknownParentIsRefusedAtomically) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddNode(t, 30, 29, 1, 0x10);
                }),
                "node 30 refers to unknown parent node 29");
}

TEST(SessionTest, UnknownModuleIsRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddNode(t, 30, 0, 9, 0x10);
                }),
                "unknown load module 9");
}

TEST(SessionTest, NodeRedefinedWithAnotherParentIsRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddNode(t, 5, 6, 1, 0x10);
                }),
                "defines node 5 twice, with different parents");
}

// An agent re-declares its nodes at the head of a spill file that starts mid-connection
// (so the file can be imported alone); the frames after it may announce some again.
TEST(SessionTest, NodeAnnouncedAgainWithTheSameParentChangesNothing) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  ASSERT_TRUE(s.Apply(TwoThreadDelta()).ok());
  const Paths before = PathsOf(Build(s));
  wire::AgentMessage again;
  wire::ThreadDelta* t = AddThread(again.mutable_delta(), 101, 1, "worker");
  AddNode(t, 5, 0, 1, 0x10);
  AddNode(t, 6, 5, 1, 0x20);
  AddNode(t, 6, 5, 1, 0x20);  // twice in one delta as well
  AddNode(t, 9, 6, 1, 0x50);  // and a new one under them
  AddMetrics(t, 9, {1, 10});
  ASSERT_TRUE(s.Apply(again).ok());
  Paths after = PathsOf(Build(s));
  EXPECT_EQ(after.size(), before.size() + 1);
  for (const auto& [path, values] : before) EXPECT_EQ(after[path], values) << path;
}

TEST(SessionTest, MetricsForUnknownNodeAreRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddMetrics(t, 77, {1});
                }),
                "metrics for unknown node 77");
}

TEST(SessionTest, TooManyMetricValuesAreRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddMetrics(t, 5, {1, 2, 3});
                }),
                "carries 3 metric values, but the Hello declared 2");
}

TEST(SessionTest, NonFiniteMetricIsRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddMetrics(t, 5, {std::numeric_limits<double>::quiet_NaN()});
                }),
                "not finite");
}

TEST(SessionTest, UnknownEnumValueIsRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta* t, wire::Delta*) {
                  AddNode(t, 30, 0, 1, 0x10, static_cast<wire::EdgeKind>(7));
                }),
                "unknown frame kind");
}

TEST(SessionTest, ModuleIdZeroAndChangedModulesAreRefused) {
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta*, wire::Delta* d) {
                  AddModule(d, 0, "/x");
                }),
                "has id 0");
  ExpectRefused(DeltaWithValidPartThen([](wire::ThreadDelta*, wire::Delta* d) {
                  AddModule(d, 1, "/bin/other");
                }),
                "load module id 1 changed");
}

TEST(SessionTest, DataAfterExitIsRefused) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(1)).ok());
  wire::AgentMessage last;
  AddThread(last.mutable_delta(), 5, 1)->set_exited(true);
  ASSERT_TRUE(s.Apply(last).ok());
  wire::AgentMessage again;
  AddMetrics(AddThread(again.mutable_delta(), 5, 1), 0, {1});
  EXPECT_FALSE(s.Apply(again).ok());
}

TEST(SessionTest, ProtocolOrderIsEnforced) {
  {
    Session s;
    const Status status = s.Apply(TwoThreadDelta());
    EXPECT_NE(status.message().find("before the Hello"), std::string::npos);
    EXPECT_FALSE(s.has_hello());
  }
  {
    Session s;
    wire::AgentMessage hello = Hello(1);
    hello.mutable_hello()->set_protocol_version(99);
    const Status status = s.Apply(hello);
    EXPECT_NE(status.message().find("protocol version 99"), std::string::npos);
  }
  {
    Session s;
    ASSERT_TRUE(s.Apply(Hello(1)).ok());
    EXPECT_NE(s.Apply(Hello(1)).message().find("second Hello"), std::string::npos);
  }
  {
    Session s;
    ASSERT_TRUE(s.Apply(Hello(1)).ok());
    ASSERT_TRUE(s.Apply(Goodbye()).ok());
    EXPECT_NE(s.Apply(TwoThreadDelta()).message().find("after the Goodbye"), std::string::npos);
  }
  {
    Session s;
    EXPECT_NE(s.Apply(wire::AgentMessage()).message().find("empty message"), std::string::npos);
  }
  {
    Session s;
    wire::AgentMessage hello = Hello(1);
    hello.mutable_hello()->add_metrics()->set_name("samples");
    EXPECT_NE(s.Apply(hello).message().find("twice"), std::string::npos);
  }
}

TEST(SessionTest, DroppedConnectionIsRecordedInTheProfile) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  ASSERT_TRUE(s.Apply(TwoThreadDelta()).ok());
  s.MarkDropped("truncated: the stream ended inside a frame (3 of 10 payload bytes)");
  const profile::Profile p = Build(s);
  EXPECT_EQ(p.totals().connections_dropped(), 1u);
  EXPECT_EQ(p.process().end_reason(), "connection lost");
  ASSERT_GE(p.process().warnings_size(), 1);
  EXPECT_NE(p.process().warnings(0).find("dropped for bad data (truncated"), std::string::npos);
  EXPECT_EQ(p.nodes_size(), 6);
}

}  // namespace
}  // namespace cilkprof::aggregator
