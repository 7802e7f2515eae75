// Per-thread values (issue 16; profile.proto ThreadValues): each thread's own part of
// every merged node's exclusive values, summing to the merged tree; the cap on threads
// named one by one; continuous-mode windows and exec chains. Also OpenMP task edges
// (issue 17) as part of a merged node's identity.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "wire_builders.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

profile::Profile Build(const Session& session) {
  FakeSymbolSource symbols(nullptr);
  profile::Profile p = session.BuildProfile(symbols, 2000000000);
  auto reread = DecodeProfileFile("built", EncodeProfileFile(p));
  EXPECT_TRUE(reread.ok()) << reread.status().message();
  return p;
}

// entry -> node -> values (metric count wide), decoded from the delta-coded columns.
using Decoded = std::vector<std::map<uint32_t, std::vector<double>>>;
Decoded Decode(const profile::Profile& p) {
  Decoded out;
  for (const profile::ThreadValues& entry : p.thread_values()) {
    auto& nodes = out.emplace_back();
    for (const profile::ThreadMetricColumn& column : entry.columns()) {
      uint32_t node = 0;
      EXPECT_EQ(column.node_delta_size(), column.value_size());
      for (int i = 0; i < column.node_delta_size(); ++i) {
        if (i > 0) {
          EXPECT_GT(column.node_delta(i), 0u) << "ascending nodes";
        }
        node += column.node_delta(i);
        auto& values = nodes[node];
        values.resize(static_cast<size_t>(p.metrics_size()), 0.0);
        values[column.metric()] += column.value(i);
      }
    }
  }
  return out;
}

// The entries, summed per node, are the merged tree's exclusive values.
void ExpectSumsToTheTree(const profile::Profile& p) {
  std::vector<std::vector<double>> sums(static_cast<size_t>(p.nodes_size()),
                                        std::vector<double>(static_cast<size_t>(p.metrics_size()), 0.0));
  for (const auto& nodes : Decode(p)) {
    for (const auto& [node, values] : nodes) {
      for (size_t m = 0; m < values.size(); ++m) sums[node][m] += values[m];
    }
  }
  for (int n = 0; n < p.nodes_size(); ++n) {
    for (int m = 0; m < p.metrics_size(); ++m) {
      const double merged = m < p.nodes(n).exclusive_size() ? p.nodes(n).exclusive(m) : 0.0;
      EXPECT_DOUBLE_EQ(sums[static_cast<size_t>(n)][static_cast<size_t>(m)], merged) << "node " << n << " metric " << m;
    }
  }
}

wire::AgentMessage TwoThreads() {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/bin/app");
  wire::ThreadDelta* a = AddThread(d, 100, 0, "main");
  AddNode(a, 1, 0, 1, 0x10);
  AddNode(a, 2, 1, 1, 0x20);
  AddMetrics(a, 2, {2, 2000});
  AddMetrics(a, 0, {1, 0});  // a sample without context: the root
  wire::ThreadDelta* b = AddThread(d, 101, 1, "worker");
  AddNode(b, 5, 0, 1, 0x10);
  AddNode(b, 6, 5, 1, 0x20);
  AddNode(b, 7, 5, 1, 0x30);
  AddMetrics(b, 6, {3, 3000});
  AddMetrics(b, 7, {1, 1000});
  return m;
}

TEST(ThreadValues, EachThreadsOwnPartSumsToTheMergedTree) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  ASSERT_TRUE(s.Apply(TwoThreads()).ok());
  ASSERT_TRUE(s.Apply(Goodbye()).ok());
  const profile::Profile p = Build(s);
  ASSERT_EQ(p.thread_values_size(), 2);
  // Ranked by samples: the worker (4) before main (3).
  EXPECT_EQ(p.threads(static_cast<int>(p.thread_values(0).threads(0))).name(), "worker");
  EXPECT_EQ(p.threads(static_cast<int>(p.thread_values(1).threads(0))).name(), "main");
  const Decoded d = Decode(p);
  // Merged node 2 (app:0x10 > app:0x20) holds main's 2 and the worker's 3 samples.
  EXPECT_EQ(d[0].at(2), (std::vector<double>{3, 3000}));
  EXPECT_EQ(d[1].at(2), (std::vector<double>{2, 2000}));
  EXPECT_EQ(d[1].at(0), (std::vector<double>{1, 0}));
  EXPECT_EQ(d[0].count(0), 0u);
  ExpectSumsToTheTree(p);
}

TEST(ThreadValues, ThreadsBeyondTheCapAreOneGroup) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/bin/app");
  const uint32_t threads = ThreadValueTable::kMaxThreadColumns + 6;
  for (uint32_t t = 0; t < threads; ++t) {
    wire::ThreadDelta* td = AddThread(d, 1000 + t, t);
    AddNode(td, 1, 0, 1, 0x10);
    AddNode(td, 2, 1, 1, 0x20 + 0x10 * (t % 3));
    AddMetrics(td, 2, {static_cast<double>(t + 1), 1000.0 * (t + 1)});  // thread t: t + 1 samples
  }
  ASSERT_TRUE(s.Apply(m).ok());
  const profile::Profile p = Build(s);
  ASSERT_EQ(p.thread_values_size(), static_cast<int>(ThreadValueTable::kMaxThreadColumns) + 1);
  for (size_t e = 0; e < ThreadValueTable::kMaxThreadColumns; ++e) {
    ASSERT_EQ(p.thread_values(static_cast<int>(e)).threads_size(), 1);
    // The busiest first: thread index threads - 1 - e.
    EXPECT_EQ(p.threads(static_cast<int>(p.thread_values(static_cast<int>(e)).threads(0))).thread_index(),
              threads - 1 - e);
  }
  const profile::ThreadValues& group = p.thread_values(static_cast<int>(ThreadValueTable::kMaxThreadColumns));
  ASSERT_EQ(group.threads_size(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p.threads(static_cast<int>(group.threads(i))).thread_index(), uint32_t(i));
  ExpectSumsToTheTree(p);
}

TEST(ThreadValues, WindowsTakeTheirOwnValues) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  ASSERT_TRUE(s.Apply(TwoThreads()).ok());
  std::unique_ptr<Session> first = s.TakeWindow(1500000000, false);
  wire::AgentMessage more;
  wire::ThreadDelta* b = AddThread(more.mutable_delta(), 101, 1, "worker");
  AddMetrics(b, 7, {5, 5000});
  ASSERT_TRUE(s.Apply(more).ok());
  std::unique_ptr<Session> second = s.TakeWindow(1600000000, true);

  const profile::Profile p1 = Build(*first);
  ASSERT_EQ(p1.thread_values_size(), 2);
  ExpectSumsToTheTree(p1);
  const profile::Profile p2 = Build(*second);
  ASSERT_EQ(p2.thread_values_size(), 1);  // only the worker sent values in it
  EXPECT_EQ(p2.threads(static_cast<int>(p2.thread_values(0).threads(0))).name(), "worker");
  ExpectSumsToTheTree(p2);
}

TEST(ThreadValues, AnExecChainSumsTheSameThread) {
  Session earlier;
  ASSERT_TRUE(earlier.Apply(Hello(42)).ok());
  ASSERT_TRUE(earlier.Apply(TwoThreads()).ok());
  ASSERT_TRUE(earlier.Apply(Goodbye("exec")).ok());
  Session later;
  ASSERT_TRUE(later.Apply(Hello(42)).ok());
  ASSERT_TRUE(later.Apply(TwoThreads()).ok());
  ASSERT_TRUE(later.Apply(Goodbye()).ok());
  ASSERT_TRUE(later.FoldExecPredecessor(earlier).ok());
  const profile::Profile p = Build(later);
  ASSERT_EQ(p.thread_values_size(), 2);
  const Decoded d = Decode(p);
  EXPECT_EQ(d[0].at(2), (std::vector<double>{6, 6000}));  // the worker's 3 samples, twice
  ExpectSumsToTheTree(p);
}

TEST(ThreadValues, TaskSpawnAndCallEdgesAreThreeNodes) {
  Session s;
  ASSERT_TRUE(s.Apply(Hello(42)).ok());
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/bin/app");
  wire::ThreadDelta* a = AddThread(d, 100, 0, "main");
  AddNode(a, 1, 0, 1, 0x10);
  AddNode(a, 2, 1, 1, 0x20, wire::EDGE_TASK);
  AddNode(a, 3, 1, 1, 0x20, wire::EDGE_SPAWN);
  AddNode(a, 4, 1, 1, 0x20, wire::EDGE_CALL);
  AddMetrics(a, 2, {1, 1000});
  AddMetrics(a, 3, {2, 2000});
  AddMetrics(a, 4, {4, 4000});
  wire::ThreadDelta* b = AddThread(d, 101, 1, "worker");
  AddNode(b, 1, 0, 1, 0x10);
  AddNode(b, 2, 1, 1, 0x20, wire::EDGE_TASK);  // the same task context as main's
  AddMetrics(b, 2, {8, 8000});
  ASSERT_TRUE(s.Apply(m).ok());
  const profile::Profile p = Build(s);
  ASSERT_EQ(p.nodes_size(), 5);
  std::map<int, double> samples_by_edge;
  for (int n = 2; n < p.nodes_size(); ++n) samples_by_edge[p.nodes(n).edge()] += p.nodes(n).exclusive(0);
  EXPECT_EQ(samples_by_edge, (std::map<int, double>{{wire::EDGE_CALL, 4}, {wire::EDGE_SPAWN, 2}, {wire::EDGE_TASK, 9}}));
  ExpectSumsToTheTree(p);
}

}  // namespace
}  // namespace cilkprof::aggregator
