// The CCT's hash index grows incrementally (issue 12, row 9a): one insert never
// rewires more than a few chains, however big the tree, and every node stays findable
// before, during and after each doubling.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cct.h"

namespace cilkprof::agent {
namespace {

// A tree grown the way deep, varied samples grow it: each new node hangs under a
// random earlier node, with a pc drawn from a small set (so keys collide on pc and
// differ by parent).
class Grower {
 public:
  explicit Grower(ThreadCct* cct) : cct_(cct), rng_(12345) {}

  // Inserts one new node; returns its id.
  uint32_t InsertOne() {
    for (;;) {
      const uint32_t count = cct_->published_count();
      const uint32_t parent = static_cast<uint32_t>(rng_() % count);
      const uintptr_t pc = 0x400000 + (rng_() % 64) * 16;
      const uint32_t id = cct_->FindOrInsertChild(parent, pc, NodeKind::kPc, 0);
      if (id == count) return id;  // new (otherwise it existed: try another key)
    }
  }

 private:
  ThreadCct* cct_;
  std::mt19937_64 rng_;
};

// Every node is found again under its own key, and no lookup creates a node.
void ExpectAllFindable(ThreadCct* cct) {
  const uint32_t count = cct->published_count();
  for (uint32_t id = 1; id < count; ++id) {
    const CctNode n = cct->node(id);
    ASSERT_EQ(cct->FindOrInsertChild(n.parent, n.pc, n.kind, n.edge), id) << "node " << id;
  }
  ASSERT_EQ(cct->published_count(), count);
}

TEST(CctIndexGrowth, NoInsertRewiresMoreThanAFewChains) {
  ThreadCct cct;
  CctOptions options;
  options.initial_buckets = 4096;
  options.max_nodes = 1u << 16;
  ASSERT_TRUE(cct.Init(options));
  Grower grower(&cct);
  // The index doubles as the tree passes 8192 and 16384 nodes (and 4096). Around both,
  // count the nodes whose chain link one insert changed: a full rehash, as before,
  // rewires nearly all of them.
  uint32_t worst = 0;
  std::vector<CctNode> before;
  while (cct.published_count() < 40000) {
    const uint32_t count = cct.published_count();
    const bool watched = (count > 8150 && count < 8400) || (count > 16340 && count < 16600);
    if (!watched) {
      grower.InsertOne();
      continue;
    }
    before.resize(count);
    for (uint32_t id = 1; id < count; ++id) before[id] = cct.node(id);
    grower.InsertOne();
    uint32_t changed = 0;
    for (uint32_t id = 1; id < count; ++id) {
      changed += std::memcmp(&cct.node(id), &before[id], sizeof(CctNode)) != 0;
    }
    worst = std::max(worst, changed);
  }
  // One old bucket moved per insert, a node or two: a handful of links.
  EXPECT_LE(worst, 32u);
  EXPECT_GT(worst, 0u);  // nodes did move while the inserts were watched
  ExpectAllFindable(&cct);
}

TEST(CctIndexGrowth, EveryNodeStaysFindableThroughEachDoubling) {
  ThreadCct cct;
  CctOptions options;
  options.initial_buckets = 1;  // many doublings, from a single bucket
  options.max_nodes = 1u << 17;
  ASSERT_TRUE(cct.Init(options));
  Grower grower(&cct);
  bool saw_growing = false;
  uint32_t checks = 0;
  while (cct.published_count() < 100000) {
    grower.InsertOne();
    const uint32_t count = cct.published_count();
    saw_growing = saw_growing || cct.index_growing();
    // Dense checks while small, then at powers of two and in the middle of moves.
    if (count < 600 || (count & (count - 1)) == 0 || (cct.index_growing() && count % 997 == 0)) {
      ExpectAllFindable(&cct);
      ++checks;
    }
  }
  EXPECT_TRUE(saw_growing);
  EXPECT_GT(checks, 600u);
  ExpectAllFindable(&cct);
  // Chains average at most one once a move has finished: the index kept up.
  if (!cct.index_growing()) {
    EXPECT_GE(uint64_t{cct.index_buckets()}, cct.published_count() - 1);
  }
}

TEST(CctIndexGrowth, PathsAndMetricsSurviveGrowth) {
  ThreadCct cct;
  CctOptions options;
  options.initial_buckets = 16;
  ASSERT_TRUE(cct.Init(options));
  SampleCounters counters;
  // 3000 distinct 20-deep paths (60,000 nodes, a dozen doublings), each recorded
  // twice, the second time after the tree has grown past it.
  std::vector<std::vector<unwinder::Frame>> paths;
  std::mt19937_64 rng(7);
  for (int p = 0; p < 3000; ++p) {
    std::vector<unwinder::Frame> frames;
    for (int d = 0; d < 20; ++d) frames.push_back({0x1000 + (rng() % 1000) * 4, unwinder::Edge::kCall});
    paths.push_back(frames);
    ASSERT_TRUE(RecordSample(&cct, &counters, frames.data(), 20, false, 10));
  }
  const uint32_t count = cct.published_count();
  for (const auto& frames : paths) ASSERT_TRUE(RecordSample(&cct, &counters, frames.data(), 20, false, 5));
  EXPECT_EQ(cct.published_count(), count);  // no path was inserted twice
  uint64_t samples = 0, work = 0;
  for (uint32_t id = 1; id < count; ++id) {
    samples += cct.metric(id, kMetricSamples);
    work += cct.metric(id, kMetricWork);
  }
  EXPECT_EQ(samples, 6000u);
  EXPECT_EQ(work, 3000u * 15);
}

}  // namespace
}  // namespace cilkprof::agent
