// The timeline's rings and per-thread buffers (issue 16; agent/src/timeline/): a full
// ring drops the newest events and counts them, drains give the events oldest first,
// and a chunk merges a thread's two rings in time order with delta-encoded times.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "timeline/timeline_buffers.h"
#include "timeline/timeline_ring.h"

namespace cilkprof::agent::timeline {
namespace {

Event Sample(uint64_t time_ns, uint32_t node) { return Event{time_ns, node, EventKind::kSample, State::kWorking, 0}; }

TEST(TimelineRing, CapacityIsRoundedUpToAPowerOfTwo) {
  Ring ring;
  ASSERT_TRUE(ring.Init(100));
  EXPECT_EQ(ring.capacity(), 128u);
  EXPECT_GE(ring.mapped_bytes(), 128 * sizeof(Event));
}

TEST(TimelineRing, FullRingDropsTheNewestAndCountsThem) {
  Ring ring;
  ASSERT_TRUE(ring.Init(4));
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(ring.Push(Sample(i, i)), i < 4) << i;
  EXPECT_EQ(ring.dropped(), 6u);
  std::vector<Event> out;
  EXPECT_EQ(ring.Drain(&out), 4u);
  ASSERT_EQ(out.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(out[i].node, i) << "the oldest are kept, in order";
  // Drained slots are free again; the drop count is a running total.
  EXPECT_TRUE(ring.Push(Sample(20, 20)));
  out.clear();
  EXPECT_EQ(ring.Drain(&out), 1u);
  EXPECT_EQ(out[0].node, 20u);
  EXPECT_EQ(ring.dropped(), 6u);
}

TEST(TimelineRing, DrainsInPushOrderAcrossTheWrap) {
  Ring ring;
  ASSERT_TRUE(ring.Init(8));
  std::vector<Event> out;
  uint32_t next = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 6; ++i, ++next) ASSERT_TRUE(ring.Push(Sample(next, next)));
    ring.Drain(&out);
  }
  ASSERT_EQ(out.size(), 30u);
  for (uint32_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].node, i);
  EXPECT_EQ(ring.dropped(), 0u);
}

// One producer thread, one consumer: every event is drained exactly once, in order, or
// counted as dropped.
TEST(TimelineRing, ConcurrentProducerAndConsumerLoseNothingUncounted) {
  Ring ring;
  ASSERT_TRUE(ring.Init(64));
  constexpr uint32_t kEvents = 200000;
  std::thread producer([&] {
    for (uint32_t i = 0; i < kEvents; ++i) ring.Push(Sample(i, i));
  });
  std::vector<Event> out;
  while (out.size() + ring.dropped() < kEvents) ring.Drain(&out);
  producer.join();
  ring.Drain(&out);
  EXPECT_EQ(out.size() + ring.dropped(), kEvents);
  for (size_t i = 1; i < out.size(); ++i) ASSERT_LT(out[i - 1].node, out[i].node) << i;
}

TEST(TimelineBuffers, NothingIsRecordedWhileTheTimelineIsOff) {
  SetEnabled(false, 16);
  Slot slot;
  ASSERT_TRUE(slot.Ensure());
  EXPECT_EQ(slot.get(), nullptr);
  RecordSample(slot, State::kIdle, 0, 1);  // no buffers: a no-op
  TimelineChunkMsg chunk;
  EXPECT_FALSE(DrainChunk(slot, &chunk));
}

TEST(TimelineBuffers, ChunkMergesBothRingsInTimeOrderWithDeltas) {
  SetEnabled(true, 16);
  Slot slot;
  ASSERT_TRUE(slot.Ensure());
  Buffers* b = slot.get();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->samples.capacity(), 16u);
  b->samples.Push(Event{1000, 7, EventKind::kSample, State::kWorking, 0});
  b->samples.Push(Event{3000, 0, EventKind::kSample, State::kIdle, 0});
  b->events.Push(Event{2000, 2, EventKind::kSteal, State::kUnknown, 0});
  b->events.Push(Event{4000, 0, EventKind::kSyncWaitBegin, State::kUnknown, 0});
  __atomic_store_n(&b->worker_id_plus_1, 2u, __ATOMIC_RELAXED);
  TimelineChunkMsg chunk;
  ASSERT_TRUE(DrainChunk(slot, &chunk));
  EXPECT_EQ(chunk.time_delta_ns, (std::vector<uint64_t>{1000, 1000, 1000, 1000}));
  EXPECT_EQ(chunk.kind, (std::vector<uint32_t>{1, 2, 1, 3}));
  EXPECT_EQ(chunk.state, (std::vector<uint32_t>{1, 0, 2, 0}));
  EXPECT_EQ(chunk.node, (std::vector<uint32_t>{7, 2, 0, 0}));
  EXPECT_EQ(chunk.worker_id_plus_1, 2u);
  EXPECT_EQ(chunk.dropped, 0u);

  // Drops are reported once, in the next chunk, even with no event to send.
  for (int i = 0; i < 20; ++i) b->events.Push(Event{5000u + i, 0, EventKind::kSyncWaitEnd, State::kUnknown, 0});
  TimelineChunkMsg full;
  ASSERT_TRUE(DrainChunk(slot, &full));
  EXPECT_EQ(full.time_delta_ns.size(), 16u);
  EXPECT_EQ(full.time_delta_ns[0], 5000u) << "each chunk's first time is absolute";
  EXPECT_EQ(full.dropped, 4u);
  TimelineChunkMsg empty;
  EXPECT_FALSE(DrainChunk(slot, &empty));
  SetEnabled(false, 16);
}

}  // namespace
}  // namespace cilkprof::agent::timeline
