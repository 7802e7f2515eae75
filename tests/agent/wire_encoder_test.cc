// The hand-written encoder against the generated classes: every field of every message
// the agent sends is parsed back by libprotobuf and compared.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frames.h"
#include "wire_messages.h"

namespace cilkprof::agent {
namespace {

using testing::ParseFrames;

wire::AgentMessage ParseOne(const std::string& frame) {
  std::string error;
  auto messages = ParseFrames(frame, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(messages.size(), 1u);
  return messages.empty() ? wire::AgentMessage() : messages[0];
}

TEST(WireEncoder, FramePrefixIsLittleEndianPayloadLength) {
  GoodbyeMsg goodbye{123, "exit", 0, ""};
  const std::string frame = EncodeGoodbyeFrame(goodbye);
  ASSERT_GE(frame.size(), 4u);
  const uint32_t n = static_cast<uint8_t>(frame[0]) | static_cast<uint8_t>(frame[1]) << 8 |
                     static_cast<uint8_t>(frame[2]) << 16 | static_cast<uint8_t>(frame[3]) << 24;
  EXPECT_EQ(n, frame.size() - 4);
}

TEST(WireEncoder, HelloRoundTrip) {
  HelloMsg h;
  h.pid = 4242;
  h.ppid = 1;
  h.executable = "/usr/bin/prog";
  h.argv = {"prog", "", "--flag=\xc3\xa9"};
  h.clock = "cpu";
  h.sample_source = "perf_event task-clock";
  h.period_ns = 1000000;
  h.unwind_mode = "dwarf";
  h.metrics = {{"samples", "count", "d1"}, {"work", "ns", ""}};
  h.start_unix_ns = 1700000000123456789ull;
  h.hostname = "host";
  h.profiling_signal = 27;
  h.warnings = {"w1", "w2"};

  const wire::AgentMessage m = ParseOne(EncodeHelloFrame(h));
  ASSERT_TRUE(m.has_hello());
  const wire::Hello& p = m.hello();
  EXPECT_EQ(p.protocol_version(), 1u);
  EXPECT_EQ(p.pid(), 4242u);
  EXPECT_EQ(p.ppid(), 1u);
  EXPECT_EQ(p.executable(), "/usr/bin/prog");
  ASSERT_EQ(p.argv_size(), 3);
  EXPECT_EQ(p.argv(0), "prog");
  EXPECT_EQ(p.argv(1), "");  // an empty repeated element is kept
  EXPECT_EQ(p.argv(2), "--flag=\xc3\xa9");
  EXPECT_EQ(p.clock(), "cpu");
  EXPECT_EQ(p.sample_source(), "perf_event task-clock");
  EXPECT_EQ(p.period_ns(), 1000000u);
  EXPECT_EQ(p.unwind_mode(), "dwarf");
  ASSERT_EQ(p.metrics_size(), 2);
  EXPECT_EQ(p.metrics(0).name(), "samples");
  EXPECT_EQ(p.metrics(0).unit(), "count");
  EXPECT_EQ(p.metrics(0).description(), "d1");
  EXPECT_EQ(p.metrics(1).name(), "work");
  EXPECT_EQ(p.metrics(1).unit(), "ns");
  EXPECT_EQ(p.start_unix_ns(), 1700000000123456789ull);
  EXPECT_EQ(p.hostname(), "host");
  EXPECT_EQ(p.profiling_signal(), 27u);
  ASSERT_EQ(p.warnings_size(), 2);
  EXPECT_EQ(p.warnings(1), "w2");
}

TEST(WireEncoder, DeltaRoundTripWithExtremeValues) {
  DeltaMsg d;
  d.modules.push_back(LoadModuleMsg{1, "/lib/libx.so", std::string("\x00\x01\xff", 3),
                                    0x7f0000000000ull, 0x7f0000001000ull, 0x7f0000009000ull,
                                    false});
  d.modules.push_back(LoadModuleMsg{2, "[vdso]", "", 0, 1, 2, true});
  ThreadDeltaMsg t;
  t.tid = 99;
  t.name = "worker";
  t.thread_index = 3;
  t.exited = true;
  t.nodes.push_back(NewNodeMsg{1, 0, WireFrameKind::kPartialUnwind, 0, 0, WireEdge::kCall});
  t.nodes.push_back(NewNodeMsg{2, 1, WireFrameKind::kPc, 1, std::numeric_limits<uint64_t>::max(),
                               WireEdge::kSpawn});
  t.nodes.push_back(NewNodeMsg{0xfffffffeu, 2, WireFrameKind::kPc, 0xffffffffu, 0x1234,
                               WireEdge::kCall});
  t.metrics.push_back(NodeMetricsMsg{2, {1.0, 1e6}});
  t.metrics.push_back(NodeMetricsMsg{3, {0.0, 0.5}});
  t.counters = ThreadCountersMsg{10, 1, 2, 3, 4000000000ull, 5, 6000000000ull, 7, 8, 9, 1, 3000000000ull, 1};
  d.threads.push_back(t);
  ThreadDeltaMsg empty;  // a thread with nothing but its id must still be a message
  empty.tid = 7;
  d.threads.push_back(empty);

  const wire::AgentMessage m = ParseOne(EncodeDeltaFrame(d));
  ASSERT_TRUE(m.has_delta());
  const wire::Delta& p = m.delta();
  ASSERT_EQ(p.modules_size(), 2);
  EXPECT_EQ(p.modules(0).id(), 1u);
  EXPECT_EQ(p.modules(0).path(), "/lib/libx.so");
  EXPECT_EQ(p.modules(0).build_id(), std::string("\x00\x01\xff", 3));
  EXPECT_EQ(p.modules(0).load_bias(), 0x7f0000000000ull);
  EXPECT_EQ(p.modules(0).start(), 0x7f0000001000ull);
  EXPECT_EQ(p.modules(0).end(), 0x7f0000009000ull);
  EXPECT_FALSE(p.modules(0).unloaded());
  EXPECT_TRUE(p.modules(1).unloaded());
  EXPECT_EQ(p.modules(1).path(), "[vdso]");

  ASSERT_EQ(p.threads_size(), 2);
  const wire::ThreadDelta& pt = p.threads(0);
  EXPECT_EQ(pt.tid(), 99u);
  EXPECT_EQ(pt.name(), "worker");
  EXPECT_EQ(pt.thread_index(), 3u);
  EXPECT_TRUE(pt.exited());
  ASSERT_EQ(pt.nodes_size(), 3);
  EXPECT_EQ(pt.nodes(0).kind(), wire::FRAME_PARTIAL_UNWIND);
  EXPECT_EQ(pt.nodes(0).parent(), 0u);
  EXPECT_EQ(pt.nodes(1).id(), 2u);
  EXPECT_EQ(pt.nodes(1).parent(), 1u);
  EXPECT_EQ(pt.nodes(1).kind(), wire::FRAME_PC);
  EXPECT_EQ(pt.nodes(1).module_id(), 1u);
  EXPECT_EQ(pt.nodes(1).offset(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(pt.nodes(1).edge(), wire::EDGE_SPAWN);
  EXPECT_EQ(pt.nodes(2).id(), 0xfffffffeu);
  EXPECT_EQ(pt.nodes(2).module_id(), 0xffffffffu);
  EXPECT_EQ(pt.nodes(2).offset(), 0x1234u);
  ASSERT_EQ(pt.metrics_size(), 2);
  EXPECT_EQ(pt.metrics(0).node(), 2u);
  ASSERT_EQ(pt.metrics(0).values_size(), 2);
  EXPECT_EQ(pt.metrics(0).values(0), 1.0);
  EXPECT_EQ(pt.metrics(0).values(1), 1e6);
  EXPECT_EQ(pt.metrics(1).values(0), 0.0);
  EXPECT_EQ(pt.metrics(1).values(1), 0.5);
  EXPECT_EQ(pt.counters().samples(), 10u);
  EXPECT_EQ(pt.counters().partial_unwinds(), 1u);
  EXPECT_EQ(pt.counters().dropped_reentrant(), 2u);
  EXPECT_EQ(pt.counters().dropped_no_memory(), 3u);
  EXPECT_EQ(pt.counters().cpu_ns(), 4000000000ull);
  EXPECT_EQ(pt.counters().idle_samples(), 5u);
  EXPECT_EQ(pt.counters().idle_ns(), 6000000000ull);
  EXPECT_EQ(pt.counters().overhead_samples(), 7u);
  EXPECT_EQ(pt.counters().unattributed_overhead(), 8u);
  EXPECT_EQ(pt.counters().probe_samples(), 9u);
  EXPECT_EQ(pt.counters().probe_partial(), 1u);
  EXPECT_EQ(pt.counters().unsampled_ns(), 3000000000ull);
  EXPECT_EQ(pt.counters().signal_blocked(), 1u);
  EXPECT_EQ(p.threads(1).tid(), 7u);
  EXPECT_EQ(p.threads(1).nodes_size(), 0);
}

TEST(WireEncoder, GoodbyeRoundTrip) {
  const wire::AgentMessage m = ParseOne(EncodeGoodbyeFrame(GoodbyeMsg{987654321, "exec", 5000000000ull, ""}));
  ASSERT_TRUE(m.has_goodbye());
  EXPECT_EQ(m.goodbye().end_unix_ns(), 987654321u);
  EXPECT_EQ(m.goodbye().reason(), "exec");
  EXPECT_EQ(m.goodbye().unseen_thread_cpu_ns(), 5000000000ull);
  EXPECT_EQ(m.goodbye().runtime(), "");
}

// The runtime the agent attached to (issue 13): what the CLI decides a second,
// instrumented run from.
TEST(WireEncoder, GoodbyeCarriesTheAttachedRuntime) {
  const wire::AgentMessage m = ParseOne(EncodeGoodbyeFrame(GoodbyeMsg{1, "exit", 0, "cilk-model"}));
  ASSERT_TRUE(m.has_goodbye());
  EXPECT_EQ(m.goodbye().runtime(), "cilk-model");
}

TEST(WireEncoder, SizeBoundHoldsForALargeThreadDelta) {
  ThreadDeltaMsg t;
  t.tid = 0xffffffffu;
  t.name = "a-rather-long-thread-name";
  for (uint32_t i = 1; i < 5000; ++i) {
    t.nodes.push_back(NewNodeMsg{0xffffff00u + i, 0xffffff00u, WireFrameKind::kPc, 0xffffffffu,
                                 ~uint64_t{0} - i, WireEdge::kSpawn});
    t.metrics.push_back(NodeMetricsMsg{0xffffff00u + i, {1e300, -1.0}});
  }
  DeltaMsg d;
  d.threads.push_back(t);
  EXPECT_LE(EncodeDeltaFrame(d).size(), EncodedSizeBound(t) + 16);
}

}  // namespace
}  // namespace cilkprof::agent
