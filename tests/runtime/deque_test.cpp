// The THE deque: the owner's push/pop racing thieves loses and duplicates nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "asymmetric_fence.hpp"
#include "the_deque.hpp"

namespace {

using cilk::rt::TheDeque;

TEST(TheDequeTest, OwnerSeesLifoThiefSeesFifo) {
  TheDeque<int> deque(2);  // tiny: forces growth
  int items[5] = {0, 1, 2, 3, 4};
  for (int& item : items) deque.Push(&item);
  EXPECT_EQ(deque.Steal(), &items[0]);
  EXPECT_EQ(deque.Pop(), &items[4]);
  EXPECT_EQ(deque.Steal(), &items[1]);
  EXPECT_EQ(deque.Pop(), &items[3]);
  EXPECT_EQ(deque.Pop(), &items[2]);
  EXPECT_EQ(deque.Pop(), nullptr);
  EXPECT_EQ(deque.Steal(), nullptr);
  EXPECT_FALSE(deque.MaybeNonEmpty());
}

TEST(TheDequeTest, DrainTakesEverythingOldestFirst) {
  TheDeque<int> deque(4);
  int items[3] = {0, 1, 2};
  for (int& item : items) deque.Push(&item);
  std::vector<int*> drained;
  deque.DrainOldestFirst([&](int* x) { drained.push_back(x); });
  ASSERT_EQ(drained.size(), 3u);
  EXPECT_EQ(drained[0], &items[0]);
  EXPECT_EQ(drained[2], &items[2]);
  EXPECT_EQ(deque.Pop(), nullptr);
}

// Every pushed item is taken exactly once, by the owner or by one of the thieves,
// and on_steal runs exactly for the stolen ones.
void PopAndStealConcurrently() {
  constexpr int kItems = 20000;
  constexpr int kThieves = 3;
  std::vector<int> values(kItems);
  std::vector<std::atomic<int>> taken(kItems);
  for (auto& t : taken) t.store(0);
  TheDeque<int> deque(8);
  std::atomic<bool> done{false};
  std::atomic<int> on_steal_calls{0};
  std::atomic<int> stolen{0};

  std::vector<std::thread> thieves;
  for (int t = 0; t < kThieves; ++t) {
    thieves.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        if (int* item = deque.Steal([&](int*) { on_steal_calls.fetch_add(1); }); item != nullptr) {
          taken[item - values.data()].fetch_add(1);
          stolen.fetch_add(1);
        }
      }
    });
  }
  // The owner pushes in bursts and pops about half, like spawns and returns.
  int next = 0;
  while (next < kItems) {
    const int burst = 1 + next % 7;
    for (int i = 0; i < burst && next < kItems; ++i) deque.Push(&values[next++]);
    for (int i = 0; i < burst / 2 + 1; ++i) {
      if (int* item = deque.Pop(); item != nullptr) taken[item - values.data()].fetch_add(1);
    }
  }
  while (int* item = deque.Pop()) taken[item - values.data()].fetch_add(1);
  done.store(true, std::memory_order_release);
  for (auto& thief : thieves) thief.join();

  for (int i = 0; i < kItems; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i;
  EXPECT_EQ(on_steal_calls.load(), stolen.load());
}

// With full fences on both sides (the scheme before the runtime enables membarrier).
TEST(TheDequeTest, ConcurrentPopAndStealTakeEachItemOnce) {
  ASSERT_FALSE(cilk::rt::asymmetric_fence::g_enabled.load());
  PopAndStealConcurrently();
}

// With the owner's pop fenced by a compiler barrier only and each steal by
// membarrier (what the runtime uses with two or more workers). Last in this file:
// the scheme cannot be switched off again in this process.
TEST(TheDequeTest, ConcurrentPopAndStealWithAsymmetricFence) {
  if (!cilk::rt::asymmetric_fence::Enable()) {
    GTEST_SKIP() << "membarrier's private expedited command is unavailable (or ThreadSanitizer build)";
  }
  PopAndStealConcurrently();
}

}  // namespace
