// The aggregator's side of the timeline (issue 16; aggregator TimelineTable through
// Session): chunks become Profile.timeline tracks with merged nodes and times since the
// start; bad chunks refuse their whole Delta; a window takes its own events.
#include <gtest/gtest.h>

#include "cilkprof/aggregator/session.h"
#include "wire_builders.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

constexpr uint64_t kStartUnix = 1700000000000000000ull;  // the Hello's start_unix_ns
constexpr uint64_t kOffset = kStartUnix - 5000;          // CLOCK_MONOTONIC 5000 ns = the start

wire::AgentMessage TimelineHello() {
  wire::AgentMessage m = Hello(42);
  m.mutable_hello()->set_start_unix_ns(kStartUnix);
  m.mutable_hello()->set_unix_minus_monotonic_ns(kOffset);
  return m;
}

// Thread (index 1, tid 101) declares nodes 5 (under the root) and 6 (under 5).
wire::AgentMessage NodesDelta() {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/bin/app");
  wire::ThreadDelta* t = AddThread(d, 101, 1, "worker");
  AddNode(t, 5, 0, 1, 0x10);
  AddNode(t, 6, 5, 1, 0x20);
  AddMetrics(t, 6, {1, 1000});
  return m;
}

wire::TimelineChunk* AddChunk(wire::Delta* d, std::vector<uint64_t> deltas, std::vector<int> kinds,
                              std::vector<int> states, std::vector<uint32_t> nodes) {
  wire::TimelineChunk* c = d->add_timeline();
  c->set_tid(101);
  c->set_thread_index(1);
  c->set_worker_id_plus_1(2);
  for (uint64_t v : deltas) c->add_time_delta_ns(v);
  for (int v : kinds) c->add_kind(static_cast<wire::TimelineEventKind>(v));
  for (int v : states) c->add_state(static_cast<wire::TimelineState>(v));
  for (uint32_t v : nodes) c->add_node(v);
  return c;
}

TEST(TimelineSession, ChunksBecomeTracksWithMergedNodesAndRelativeTimes) {
  Session s;
  ASSERT_TRUE(s.Apply(TimelineHello()).ok());
  ASSERT_TRUE(s.Apply(NodesDelta()).ok());
  wire::AgentMessage m;
  // 6000: a working sample at node 6; +500: a steal from worker 0; +500: an idle sample.
  AddChunk(m.mutable_delta(), {6000, 500, 500}, {wire::TIMELINE_SAMPLE, wire::TIMELINE_STEAL, wire::TIMELINE_SAMPLE},
           {wire::TIMELINE_WORKING, 0, wire::TIMELINE_IDLE}, {6, 1, 0})
      ->set_dropped(3);
  ASSERT_TRUE(s.Apply(m).ok());
  FakeSymbolSource symbols;
  const profile::Profile p = s.BuildProfile(symbols, kStartUnix + 1000000);
  ASSERT_TRUE(p.has_timeline());
  EXPECT_EQ(p.timeline().start_unix_ns(), kStartUnix);
  EXPECT_EQ(p.timeline().dropped_events(), 3u);
  ASSERT_EQ(p.timeline().tracks_size(), 1);
  const profile::TimelineTrack& t = p.timeline().tracks(0);
  EXPECT_EQ(t.thread_index(), 1u);
  EXPECT_EQ(t.tid(), 101u);
  EXPECT_EQ(t.worker_id_plus_1(), 2u);
  ASSERT_EQ(t.time_ns_size(), 3);
  EXPECT_EQ(t.time_ns(0), 1000u);
  EXPECT_EQ(t.time_ns(1), 1500u);
  EXPECT_EQ(t.time_ns(2), 2000u);
  // Node 6 of the thread is the profile node under the one of node 5, under the root.
  const uint32_t node = t.node(0);
  ASSERT_GT(node, 0u);
  ASSERT_LT(node, static_cast<uint32_t>(p.nodes_size()));
  EXPECT_EQ(p.nodes(static_cast<int>(node)).exclusive(1), 1000);
  EXPECT_EQ(t.node(1), 1u) << "a steal's victim, not a node";
  EXPECT_EQ(t.node(2), 0u);
  EXPECT_EQ(t.state(2), wire::TIMELINE_IDLE);
}

TEST(TimelineSession, NoTimelineWithoutChunks) {
  Session s;
  ASSERT_TRUE(s.Apply(TimelineHello()).ok());
  ASSERT_TRUE(s.Apply(NodesDelta()).ok());
  FakeSymbolSource symbols;
  EXPECT_FALSE(s.BuildProfile(symbols, kStartUnix + 1).has_timeline());
}

TEST(TimelineSession, BadChunksRefuseTheDelta) {
  struct Case {
    std::vector<uint64_t> deltas;
    std::vector<int> kinds, states;
    std::vector<uint32_t> nodes;
    const char* why;
  };
  const std::vector<Case> cases = {
      {{6000}, {wire::TIMELINE_SAMPLE}, {1}, {}, "differ in length"},
      {{6000}, {wire::TIMELINE_SAMPLE}, {1}, {99}, "names unknown node 99"},
      {{6000}, {0}, {0}, {0}, "unknown kind"},
      {{6000}, {wire::TIMELINE_SAMPLE}, {42}, {0}, "unknown kind"},
  };
  for (const Case& c : cases) {
    Session s;
    ASSERT_TRUE(s.Apply(TimelineHello()).ok());
    ASSERT_TRUE(s.Apply(NodesDelta()).ok());
    wire::AgentMessage m;
    AddChunk(m.mutable_delta(), c.deltas, c.kinds, c.states, c.nodes);
    const Status status = s.Apply(m);
    ASSERT_FALSE(status.ok()) << c.why;
    EXPECT_NE(status.message().find(c.why), std::string::npos) << status.message();
  }
  // Events without the Hello's clock offset cannot be placed in time.
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  wire::AgentMessage m;
  AddChunk(m.mutable_delta(), {6000}, {wire::TIMELINE_STEAL}, {0}, {1});
  EXPECT_FALSE(s.Apply(m).ok());
}

TEST(TimelineSession, AWindowTakesItsEventsAndKeepsTheirNodes) {
  Session s;
  ASSERT_TRUE(s.Apply(TimelineHello()).ok());
  ASSERT_TRUE(s.Apply(NodesDelta()).ok());
  s.set_window_start(kStartUnix);
  // A sample at node 5, which holds no value: the window keeps it for the sample.
  wire::AgentMessage m;
  AddChunk(m.mutable_delta(), {6000}, {wire::TIMELINE_SAMPLE}, {wire::TIMELINE_OVERHEAD}, {5});
  ASSERT_TRUE(s.Apply(m).ok());
  std::unique_ptr<Session> first = s.TakeWindow(kStartUnix + 10000, /*last=*/false);
  wire::AgentMessage later;
  AddChunk(later.mutable_delta(), {20000}, {wire::TIMELINE_SYNC_WAIT_BEGIN}, {0}, {0});
  ASSERT_TRUE(s.Apply(later).ok());
  std::unique_ptr<Session> second = s.TakeWindow(kStartUnix + 30000, /*last=*/true);

  FakeSymbolSource symbols;
  const profile::Profile p1 = first->BuildProfile(symbols, kStartUnix + 10000);
  ASSERT_EQ(p1.timeline().tracks_size(), 1);
  ASSERT_EQ(p1.timeline().tracks(0).node_size(), 1);
  const uint32_t node = p1.timeline().tracks(0).node(0);
  ASSERT_GT(node, 0u);
  ASSERT_LT(node, static_cast<uint32_t>(p1.nodes_size()));
  EXPECT_EQ(p1.nodes(static_cast<int>(node)).parent(), 0u) << "node 5 is under the root";
  const profile::Profile p2 = second->BuildProfile(symbols, kStartUnix + 30000);
  ASSERT_EQ(p2.timeline().tracks_size(), 1);
  ASSERT_EQ(p2.timeline().tracks(0).kind_size(), 1);
  EXPECT_EQ(p2.timeline().tracks(0).kind(0), wire::TIMELINE_SYNC_WAIT_BEGIN);
  EXPECT_EQ(p2.timeline().tracks(0).worker_id_plus_1(), 2u) << "the worker is remembered across windows";
  // Times are since each window's start (process.start_unix_ns of the window).
  EXPECT_EQ(p2.timeline().start_unix_ns(), p2.process().start_unix_ns());
}

}  // namespace
}  // namespace cilkprof::aggregator
