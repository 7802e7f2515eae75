// The blame arithmetic for runtimes that report their lock calls after the fact (OMPT's
// mutex callbacks, issue 17; agent/src/locks/lock_table.h AcquireReported and
// ReleaseReported) on a fake clock: a release reported after the waiter already got the
// lock is booked by that waiter for the holder; uncontended acquisitions are dropped;
// conservation (wait = blame + unblamed) holds exactly in every order.
#include <gtest/gtest.h>

#include "locks/lock_table.h"

namespace cilkprof::agent::locks {
namespace {

uint64_t g_now = 0;
uint64_t FakeNow() { return g_now; }

constexpr uintptr_t kHolder = 0x1000, kWaiter = 0x2000, kOther = 0x3000;
constexpr uint64_t kContendedNs = 1000;

// The holder acquired first (unregistered, uncontended), the waiter registers at 100.
LockRecord* HeldWithOneWaiter(LockTable* table, uint64_t* t0) {
  LockRecord* r = table->FindOrInsert(0x40, LockKind::kOmpCritical);
  g_now = 10;
  const LockTable::Acquisition h = table->AcquireReported(r, /*registered=*/false, 10, kHolder, FakeNow, kContendedNs);
  EXPECT_FALSE(h.waited);
  EXPECT_EQ(r->holder, kHolder);
  g_now = 100;
  *t0 = table->BeginWait(r, FakeNow);
  return r;
}

// The order pthread interposition sees: the holder's release reported before the
// waiter's acquisition.
TEST(ReportedRelease, HolderReportsFirst) {
  LockTable table;
  uint64_t t0 = 0;
  LockRecord* r = HeldWithOneWaiter(&table, &t0);
  g_now = 5000;
  const uint64_t blame = table.ReleaseReported(r, kHolder, FakeNow);
  EXPECT_EQ(blame, 4900u);
  EXPECT_EQ(r->holder, 0u);
  g_now = 5040;
  const LockTable::Acquisition a = table.AcquireReported(r, /*registered=*/true, t0, kWaiter, FakeNow, kContendedNs);
  EXPECT_TRUE(a.waited);
  EXPECT_EQ(a.wait, 4940u);
  EXPECT_EQ(a.unblamed, 40u);
  EXPECT_EQ(a.wait, blame + a.unblamed);
  EXPECT_EQ(r->wait_ns, a.wait);
  EXPECT_EQ(r->blame_ns, blame);
  EXPECT_EQ(r->holder, kWaiter);
  EXPECT_EQ(table.waiters(), 0u);
}

// libomp's order: the waiter gets the lock before the holder's mutex_released runs. The
// waiter books the release at its acquisition, the holder collects it at its report.
TEST(ReportedRelease, WaiterAcquiresBeforeTheHolderReports) {
  LockTable table;
  uint64_t t0 = 0;
  LockRecord* r = HeldWithOneWaiter(&table, &t0);
  g_now = 5040;
  const LockTable::Acquisition a = table.AcquireReported(r, /*registered=*/true, t0, kWaiter, FakeNow, kContendedNs);
  EXPECT_TRUE(a.waited);
  EXPECT_EQ(a.wait, 4940u);
  EXPECT_EQ(a.unblamed, 0u) << "the booked release covers the whole wait";
  EXPECT_EQ(r->unbooked_owner, kHolder);
  g_now = 5100;
  const uint64_t blame = table.ReleaseReported(r, kHolder, FakeNow);
  EXPECT_EQ(blame, 4940u);
  EXPECT_EQ(r->unbooked_owner, 0u);
  EXPECT_EQ(r->holder, kWaiter) << "the late report does not end the new holder's hold";
  EXPECT_EQ(r->blame_ns, blame);
  // The new holder's release: nobody waits, no blame, the hold ends.
  g_now = 6000;
  EXPECT_EQ(table.ReleaseReported(r, kWaiter, FakeNow), 0u);
  EXPECT_EQ(r->holder, 0u);
}

// A registered acquisition of a free lock (the lock had a record): short and covered by
// no release, so it is no wait at all, and nothing is counted.
TEST(ReportedRelease, UncontendedRegisteredAcquisitionIsDropped) {
  LockTable table;
  LockRecord* r = table.FindOrInsert(0x40, LockKind::kOmpLock);
  g_now = 100;
  const uint64_t t0 = table.BeginWait(r, FakeNow);
  g_now = 150;
  const LockTable::Acquisition a = table.AcquireReported(r, /*registered=*/true, t0, kWaiter, FakeNow, kContendedNs);
  EXPECT_FALSE(a.waited);
  EXPECT_EQ(a.wait, a.unblamed);
  EXPECT_EQ(r->wait_ns, 0u);
  EXPECT_EQ(table.waiters(), 0u);
  EXPECT_EQ(r->n_waiters, 0u);
  EXPECT_EQ(r->sum_start, 0u);
}

// A slow acquisition of a free lock (lazy binding, a page fault, preemption: no release
// during it, no other holder) is no wait, registered or not. Not registered while
// another thread holds the lock: a long acquisition is a wait, all of it unblamed.
TEST(ReportedRelease, SlowButUncontendedAndUnregisteredWaits) {
  LockTable table;
  LockRecord* r = table.FindOrInsert(0x40, LockKind::kOmpLock);
  g_now = 3000;
  LockTable::Acquisition a = table.AcquireReported(r, /*registered=*/false, 1000, kWaiter, FakeNow, kContendedNs);
  EXPECT_FALSE(a.waited) << "nobody held it";
  g_now = 3500;
  EXPECT_EQ(table.ReleaseReported(r, kWaiter, FakeNow), 0u);
  g_now = 4000;
  const uint64_t t0 = table.BeginWait(r, FakeNow);
  g_now = 9000;
  a = table.AcquireReported(r, /*registered=*/true, t0, kWaiter, FakeNow, kContendedNs);
  EXPECT_FALSE(a.waited) << "registered, 5 us, but no release and no other holder";
  EXPECT_EQ(r->wait_ns, 0u);
  // kWaiter holds it (not reported yet); kOther's acquisition was not registered.
  g_now = 12000;
  a = table.AcquireReported(r, /*registered=*/false, 10000, kOther, FakeNow, kContendedNs);
  EXPECT_TRUE(a.waited);
  EXPECT_EQ(a.wait, 2000u);
  EXPECT_EQ(a.unblamed, 2000u);
  EXPECT_EQ(r->wait_ns, 2000u);
  g_now = 12600;
  a = table.AcquireReported(r, /*registered=*/false, 12500, kWaiter, FakeNow, kContendedNs);
  EXPECT_FALSE(a.waited) << "shorter than contended_ns";
  EXPECT_EQ(table.waiters(), 0u);
}

// Two waiters, the holder's report late: the first waiter books the release for both
// waiters' time; the second waiter's remaining wait is the new holder's blame.
TEST(ReportedRelease, TwoWaitersConserve) {
  LockTable table;
  uint64_t a0 = 0;
  LockRecord* r = HeldWithOneWaiter(&table, &a0);
  g_now = 200;
  const uint64_t b0 = table.BeginWait(r, FakeNow);
  g_now = 2000;  // A gets the lock; the holder has not reported
  const LockTable::Acquisition a = table.AcquireReported(r, true, a0, kWaiter, FakeNow, kContendedNs);
  g_now = 2100;
  const uint64_t holder_blame = table.ReleaseReported(r, kHolder, FakeNow);
  EXPECT_EQ(holder_blame, (2000u - 100u) + (2000u - 200u));
  g_now = 3000;  // A releases and reports before B acquires
  const uint64_t a_blame = table.ReleaseReported(r, kWaiter, FakeNow);
  EXPECT_EQ(a_blame, 1000u);
  g_now = 3010;
  const LockTable::Acquisition b = table.AcquireReported(r, true, b0, kOther, FakeNow, kContendedNs);
  EXPECT_EQ(b.unblamed, 10u);
  EXPECT_EQ(a.wait + b.wait, holder_blame + a_blame + a.unblamed + b.unblamed);
  EXPECT_EQ(r->wait_ns, a.wait + b.wait);
  EXPECT_EQ(r->blame_ns, holder_blame + a_blame);
  EXPECT_EQ(r->n_waiters, 0u);
  EXPECT_EQ(r->sum_start, 0u);
  EXPECT_EQ(table.waiters(), 0u);
}

}  // namespace
}  // namespace cilkprof::agent::locks
