// The lock records of issue 14 (agent/src/locks/lock_table.h): the lock-free table
// (many locks, colliding buckets, concurrent inserts), the blame arithmetic on a fake
// clock, and the lock clocks' charging (lock_clock.h).
#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "locks/lock_clock.h"
#include "locks/lock_table.h"
#include "sample_interval.h"

namespace cilkprof::agent::locks {
namespace {

uint64_t g_now = 0;
uint64_t FakeNow() { return g_now; }

TEST(LockTable, FindsWhatItInsertedAcrossManyLocks) {
  LockTable table(4);  // 16 buckets: long chains
  EXPECT_EQ(table.Find(0x1000), nullptr);
  std::vector<LockRecord*> records;
  for (uintptr_t a = 1; a <= 5000; ++a) records.push_back(table.FindOrInsert(a * 64, LockKind::kMutex));
  EXPECT_EQ(table.size(), 5000u);
  for (uintptr_t a = 1; a <= 5000; ++a) {
    ASSERT_EQ(table.Find(a * 64), records[a - 1]);
    EXPECT_EQ(records[a - 1]->address, a * 64);
    EXPECT_EQ(table.FindOrInsert(a * 64, LockKind::kSpin), records[a - 1]) << "found, not inserted twice";
  }
  size_t listed = 0;
  for (LockRecord* r = table.first(); r != nullptr; r = r->all_next) ++listed;
  EXPECT_EQ(listed, 5000u);
}

TEST(LockTable, EverythingCollidesInOneBucketAndNothingIsDropped) {
  LockTable table(0);  // one bucket
  for (uintptr_t a = 1; a <= 300; ++a) ASSERT_NE(table.FindOrInsert(a, LockKind::kRwlock), nullptr);
  for (uintptr_t a = 1; a <= 300; ++a) {
    LockRecord* r = table.Find(a);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->kind, LockKind::kRwlock);
  }
  EXPECT_EQ(table.size(), 300u);
}

TEST(LockTable, ConcurrentInsertsOfTheSameAndOfDistinctLocks) {
  LockTable table(2);
  constexpr int kThreads = 8, kLocks = 2000;
  std::atomic<int> go{0};
  std::vector<std::vector<LockRecord*>> seen(kThreads, std::vector<LockRecord*>(kLocks));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (go.load() == 0) {
      }
      for (int i = 0; i < kLocks; ++i) {
        // Half the keys are shared by all threads, half are the thread's own.
        const uintptr_t key = i % 2 == 0 ? uintptr_t(i) * 16 + 8 : (uintptr_t(t + 1) << 32) + uintptr_t(i) * 16;
        seen[t][i] = table.FindOrInsert(key, LockKind::kMutex);
      }
    });
  }
  go.store(1);
  for (std::thread& th : threads) th.join();
  for (int i = 0; i < kLocks; i += 2) {
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(seen[t][i], seen[0][i]) << "one record per lock";
  }
  EXPECT_EQ(table.size(), size_t{kLocks / 2 + kThreads * kLocks / 2});
  std::set<uintptr_t> keys;
  for (LockRecord* r = table.first(); r != nullptr; r = r->all_next) EXPECT_TRUE(keys.insert(r->address).second);
  EXPECT_EQ(keys.size(), table.size());
}

// One holder, two waiters: the blame is the waits minus the hand-offs, exactly.
TEST(LockBlame, OneHolderTwoWaiters) {
  LockTable table;
  LockRecord* r = table.FindOrInsert(0x40, LockKind::kMutex);
  g_now = 1000;
  const uint64_t a0 = table.BeginWait(r, FakeNow);  // waiter A at 1000
  g_now = 1500;
  const uint64_t b0 = table.BeginWait(r, FakeNow);  // waiter B at 1500
  EXPECT_EQ(table.waiters(), 2u);
  g_now = 3000;
  const uint64_t blame1 = table.Release(r, FakeNow);  // the holder releases at 3000
  EXPECT_EQ(blame1, (3000u - 1000u) + (3000u - 1500u));
  uint64_t unblamed_a = 0;
  g_now = 3100;
  const uint64_t wait_a = table.EndWait(r, a0, FakeNow, &unblamed_a);  // A gets it at 3100
  EXPECT_EQ(wait_a, 2100u);
  EXPECT_EQ(unblamed_a, 100u);
  g_now = 4000;
  const uint64_t blame2 = table.Release(r, FakeNow);  // A releases at 4000; B still waits
  EXPECT_EQ(blame2, 1000u);
  uint64_t unblamed_b = 0;
  g_now = 4050;
  const uint64_t wait_b = table.EndWait(r, b0, FakeNow, &unblamed_b);
  EXPECT_EQ(wait_b, 2550u);
  EXPECT_EQ(unblamed_b, 50u);
  EXPECT_EQ(wait_a + wait_b, blame1 + blame2 + unblamed_a + unblamed_b);
  EXPECT_EQ(r->wait_ns, wait_a + wait_b);
  EXPECT_EQ(r->blame_ns, blame1 + blame2);
  EXPECT_EQ(table.waiters(), 0u);
  EXPECT_EQ(r->n_waiters, 0u);
  EXPECT_EQ(r->sum_start, 0u);
  g_now = 5000;
  EXPECT_EQ(table.Release(r, FakeNow), 0u) << "no waiter: no blame";
}

// A waiter that registers after a release starts from its own t0, not the release.
TEST(LockBlame, LateWaiterAndATimeout) {
  LockTable table;
  LockRecord* r = table.FindOrInsert(0x80, LockKind::kMutex);
  g_now = 100;
  const uint64_t a0 = table.BeginWait(r, FakeNow);
  g_now = 200;
  EXPECT_EQ(table.Release(r, FakeNow), 100u);
  g_now = 250;
  const uint64_t b0 = table.BeginWait(r, FakeNow);
  g_now = 400;
  EXPECT_EQ(table.Release(r, FakeNow), (400u - 200u) + (400u - 250u));
  uint64_t unblamed = 0;
  g_now = 900;  // B's timed wait ends without the lock: the rest is unblamed
  EXPECT_EQ(table.EndWait(r, b0, FakeNow, &unblamed), 650u);
  EXPECT_EQ(unblamed, 500u);
  g_now = 950;
  EXPECT_EQ(table.EndWait(r, a0, FakeNow, &unblamed), 850u);
  EXPECT_EQ(unblamed, 550u);
  EXPECT_EQ(r->n_waiters, 0u);
  EXPECT_EQ(r->sum_start, 0u);
}

// Random interleavings of many waiters and releases on real threads: conservation holds
// exactly, whatever the order.
TEST(LockBlame, ConservationUnderRealContention) {
  LockTable table;
  LockRecord* r = table.FindOrInsert(0x100, LockKind::kMutex);
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<uint64_t> waits{0}, blames{0}, unblamed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        const uint64_t t0 = table.BeginWait(r, MonotonicNs);
        pthread_mutex_lock(&mu);
        uint64_t u = 0;
        waits += table.EndWait(r, t0, MonotonicNs, &u);
        unblamed += u;
        blames += table.Release(r, MonotonicNs);
        pthread_mutex_unlock(&mu);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(waits.load(), blames.load() + unblamed.load());
  EXPECT_EQ(r->n_waiters, 0u);
  EXPECT_EQ(table.waiters(), 0u);
}

TEST(LockTable, ForgetWaitersAndFork) {
  LockTable table;
  LockRecord* r = table.FindOrInsert(0x200, LockKind::kMutex);
  LockRecord* c = table.FindOrInsert(0x300, LockKind::kCond);
  g_now = 10;
  const uint64_t t0 = table.BeginWait(r, FakeNow);
  table.BeginWait(r, FakeNow);
  table.BeginCondWait(c);
  table.ForgetWaiters(r);  // destroyed
  EXPECT_EQ(table.waiters(), 0u);
  uint64_t unblamed = 0;
  g_now = 20;
  EXPECT_EQ(table.EndWait(r, t0, FakeNow, &unblamed), 10u);
  EXPECT_EQ(table.waiters(), 0u) << "a waiter of a destroyed lock does not count twice";
  table.BeginWait(r, FakeNow);
  r->spin = 1;  // held by a thread that does not exist in the child
  table.ResetAfterFork();
  EXPECT_EQ(table.waiters(), 0u);
  EXPECT_EQ(table.cond_waiters(), 0u);
  EXPECT_EQ(r->n_waiters, 0u);
  EXPECT_EQ(r->spin, 0u);
  EXPECT_EQ(c->cond_waiters, 0u);
}

TEST(LockClock, ChargesTheAmountInExpectation) {
  LockClock clock;
  uint64_t rng = SeedSampleIntervals(7, 1);
  constexpr uint64_t kMean = 1000000;
  uint64_t crossings = 0, total = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t amount = 1000 + (static_cast<uint64_t>(i) * 7919) % 200000;  // 1 us .. 200 us
    total += amount;
    crossings += AdvanceLockClock(&clock, amount, kMean, &rng);
  }
  const double charged = static_cast<double>(crossings * kMean);
  EXPECT_GT(charged, 0.9 * static_cast<double>(total));
  EXPECT_LT(charged, 1.1 * static_cast<double>(total));
}

TEST(LockClock, OneLongAmountCrossesManyTimesNothingCrossesNothing) {
  LockClock clock;
  uint64_t rng = SeedSampleIntervals(3, 2);
  EXPECT_EQ(AdvanceLockClock(&clock, 0, 1000000, &rng), 0u);
  const uint64_t crossings = AdvanceLockClock(&clock, 1000000000, 1000000, &rng);  // 1 s at 1 ms
  EXPECT_GT(crossings, 900u);
  EXPECT_LT(crossings, 1100u);
  EXPECT_EQ(AdvanceLockClock(&clock, 5, 0, &rng), 0u) << "no period, no charge";
}

}  // namespace
}  // namespace cilkprof::agent::locks
