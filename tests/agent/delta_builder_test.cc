// Shadow values: increments of successive deltas add up to the live totals; nodes are
// sent once, after their parents; large trees are split into batches.
#include <gtest/gtest.h>

#include <map>

#include "delta_builder.h"

namespace cilkprof::agent {
namespace {

using unwinder::Edge;
using unwinder::Frame;

// Module 1 at bias 0x1000 holds every pc.
class FakeResolver : public PcResolver {
 public:
  ResolvedPc Resolve(uintptr_t pc) override { return ResolvedPc{1, pc - 0x1000}; }
};

class DeltaBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cct_.Init(CctOptions{})); }
  void Record(std::initializer_list<uintptr_t> innermost_first, uint64_t weight) {
    std::vector<Frame> frames;
    for (uintptr_t pc : innermost_first) frames.push_back(Frame{pc, Edge::kCall});
    RecordSample(&cct_, &counters_, frames.data(), static_cast<uint32_t>(frames.size()), false, weight);
  }
  // One flush; returns the batches it produced and accumulates them into totals_.
  std::vector<ThreadDeltaMsg> Flush(size_t max_entries = 1000000) {
    std::vector<ThreadDeltaMsg> batches;
    builder_.BeginCycle();
    bool done = false;
    while (!done) {
      ThreadDeltaMsg d;
      done = builder_.Build(cct_, counters_, &resolver_, max_entries, &d);
      for (const NewNodeMsg& n : d.nodes) {
        EXPECT_TRUE(known_.count(n.parent) || n.parent == 0) << "parent sent first";
        EXPECT_FALSE(known_.count(n.id)) << "node sent twice";
        known_[n.id] = n;
      }
      for (const NodeMetricsMsg& m : d.metrics) {
        EXPECT_TRUE(known_.count(m.node)) << "metric before its node";
        samples_[m.node] += m.values[kMetricSamples];
        work_[m.node] += m.values[kMetricWork];
      }
      total_samples_ += d.counters.samples;
      total_cpu_ns_ += d.counters.cpu_ns;
      batches.push_back(d);
    }
    return batches;
  }
  void ExpectTotalsMatchTheTree() {
    for (uint32_t id = 1; id < cct_.published_count(); ++id) {
      EXPECT_EQ(samples_[id], static_cast<double>(cct_.metric(id, kMetricSamples))) << id;
      EXPECT_EQ(work_[id], static_cast<double>(cct_.metric(id, kMetricWork))) << id;
    }
    EXPECT_EQ(total_samples_, counters_.samples);
    EXPECT_EQ(total_cpu_ns_, counters_.cpu_ns);
  }

  ThreadCct cct_;
  SampleCounters counters_;
  ThreadDeltaBuilder builder_;
  FakeResolver resolver_;
  std::map<uint32_t, NewNodeMsg> known_;
  std::map<uint32_t, double> samples_, work_;
  uint64_t total_samples_ = 0, total_cpu_ns_ = 0;
};

TEST_F(DeltaBuilderTest, TwoFlushesSendIncrementsThatAddUp) {
  Record({0x1030, 0x1020, 0x1010}, 100);
  Record({0x1030, 0x1020, 0x1010}, 100);
  auto first = Flush();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].nodes.size(), 3u);
  ASSERT_EQ(first[0].metrics.size(), 1u);
  EXPECT_EQ(first[0].metrics[0].values[kMetricSamples], 2.0);
  EXPECT_EQ(first[0].metrics[0].values[kMetricWork], 200.0);
  EXPECT_EQ(first[0].nodes[0].module_id, 1u);
  EXPECT_EQ(first[0].nodes[0].offset, 0x10u);  // outermost first: main at 0x1010

  Record({0x1030, 0x1020, 0x1010}, 50);
  Record({0x1040, 0x1010}, 25);
  auto second = Flush();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].nodes.size(), 1u);  // only c is new
  ASSERT_EQ(second[0].metrics.size(), 2u);
  EXPECT_EQ(second[0].metrics[0].values[kMetricSamples], 1.0);  // b: 3 - 2
  EXPECT_EQ(second[0].metrics[0].values[kMetricWork], 50.0);
  EXPECT_EQ(second[0].counters.samples, 2u);
  ExpectTotalsMatchTheTree();
}

TEST_F(DeltaBuilderTest, NothingNewSendsNothing) {
  Record({0x1030, 0x1010}, 1);
  Flush();
  auto again = Flush();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again[0].nodes.empty());
  EXPECT_TRUE(again[0].metrics.empty());
  EXPECT_TRUE(again[0].counters.IsZero());
}

TEST_F(DeltaBuilderTest, TheThreadEndIsSentOnce) {
  Record({0x1030, 0x1010}, 10);
  Flush();
  CounterAdd(&counters_.unsampled_ns, 700);  // what the thread's end measured
  CounterAdd(&counters_.signal_blocked, 1);
  auto end = Flush();
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0].counters.unsampled_ns, 700u);
  EXPECT_EQ(end[0].counters.signal_blocked, 1u);
  EXPECT_FALSE(end[0].counters.IsZero());
  auto after = Flush();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].counters.IsZero());
}

TEST_F(DeltaBuilderTest, LargeTreesAreSplitIntoBatchesThatStillAddUp) {
  for (uintptr_t leaf = 0; leaf < 1000; ++leaf) Record({0x5000 + leaf, 0x1020, 0x1010}, leaf + 1);
  auto batches = Flush(/*max_entries=*/64);
  EXPECT_GT(batches.size(), 10u);
  for (const auto& b : batches) {
    EXPECT_LE(b.nodes.size(), 64u);
    EXPECT_LE(b.metrics.size(), 64u);
  }
  for (uintptr_t leaf = 0; leaf < 1000; leaf += 3) Record({0x5000 + leaf, 0x1020, 0x1010}, 7);
  Flush(64);
  ExpectTotalsMatchTheTree();
  EXPECT_EQ(known_.size(), cct_.published_count() - 1);
}

TEST_F(DeltaBuilderTest, ResendNodesRepeatsNodesButNotIncrements) {
  Record({0x1030, 0x1010}, 10);
  Flush();
  builder_.ResendNodes();
  known_.clear();
  builder_.BeginCycle();
  ThreadDeltaMsg d;
  EXPECT_TRUE(builder_.Build(cct_, counters_, &resolver_, 1000, &d));
  EXPECT_EQ(d.nodes.size(), 2u);
  EXPECT_TRUE(d.metrics.empty());
}

}  // namespace
}  // namespace cilkprof::agent
