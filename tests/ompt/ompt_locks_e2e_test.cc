// Lock blame for OpenMP locks (issue 17; docs/OPENMP.md "Locks and critical sections")
// end to end: omp_lock_shape (omp_lock_shape.cc) under cilkprof-run with the real agent
// as libomp's OMPT tool, the aggregator and the views. The pthread equivalent is
// tests/locks/locks_e2e_test.cc, whose bounds these follow.
//
// omp_lock_shape: thread 0 holds the lock in hold_long() while the other thread waits
// for it in wait_here(); every wait happens during a hold_long() critical section. The
// exact totals (measured at the mutex callbacks) conserve exactly: wait = blame +
// unblamed, to the nanosecond. The contexts come from sampled charges (the lock clocks
// draw them like samples, 200 us mean over about 0.3 s of waiting: hundreds of draws),
// so shares get generous bounds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lock_e2e_checks.h"

using cilkprof::cli::testing::TempDir;
using cilkprof::tests::locks::ExpectConservedAndSampledNearTheTotals;
using cilkprof::tests::locks::ExpectHoldLongBlamedAndWaitHereWaiting;
using cilkprof::tests::locks::Json;
using cilkprof::tests::locks::JsonOf;
using cilkprof::tests::locks::Profile;

namespace {

constexpr int kRounds = 60;

// One waiter, kRounds critical sections of about 5 ms of work in hold_long().
void ExpectKnownShape(const std::string& mode, const std::string& kind, const std::string& clock) {
  TempDir dir;
  const std::string profile = Profile(dir, mode + "_" + clock, {"--clock", clock, "--period", "200us"},
                                      {CILKPROF_TEST_OMP_LOCK_SHAPE, mode, "1", std::to_string(kRounds), "1500000"});
  int code = 0;
  std::string err;
  const Json locks = JsonOf({CILKPROF_TEST_CILKPROF, "view", "locks", "--format", "json", profile}, &code, &err);
  ASSERT_EQ(code, 0) << err;
  ASSERT_TRUE(locks.is_array() && !locks.empty()) << locks.dump();
  const Json& lock = locks[0];
  EXPECT_EQ(lock.value("kind", ""), kind) << lock.dump(2);
  // Every round's wait is one contended acquisition (the first round's may be missed:
  // the lock has no record before its first contention, see ompt_locks.h).
  EXPECT_GE(lock.value("contended", 0), kRounds - 2) << lock.dump(2);
  EXPECT_LE(lock.value("contended", 0), 2 * kRounds) << lock.dump(2);
  const double wait = lock.value("wait_ns", 0.0);
  const double blame = lock.value("blame_ns", 0.0);
  ASSERT_GT(wait, 0);
  // The hand-off (release to acquisition, unblamed) grows on a loaded machine: the
  // waiter must be scheduled to take the lock.
  EXPECT_GE(blame / wait, 0.25) << "the waits happen during hold_long's critical sections: " << lock.dump(2);
  // With --clock wall the waiter's samples are unwound from their signal context inside
  // libomp's spin, in sched_yield (the C library, called by libomp for itself: dropped,
  // unwinder/logical.h `callees`): they land on wait_here as the CPU clock's charges,
  // made at the acquire callback, do.
  ExpectHoldLongBlamedAndWaitHereWaiting(lock, 80.0, 90.0);
  ExpectConservedAndSampledNearTheTotals(profile, wait);
}

}  // namespace

TEST(OmptLocksE2E, CriticalCpuClock) { ExpectKnownShape("critical", "omp critical", "cpu"); }
TEST(OmptLocksE2E, CriticalWallClock) { ExpectKnownShape("critical", "omp critical", "wall"); }
TEST(OmptLocksE2E, OmpLockCpuClock) { ExpectKnownShape("lock", "omp_lock", "cpu"); }
TEST(OmptLocksE2E, NestLockCpuClock) { ExpectKnownShape("nest", "omp_nest_lock", "cpu"); }

// One thread: nothing waits, nothing is blamed (every acquisition is uncontended).
TEST(OmptLocksE2E, OneThreadNeverWaitsAndBlamesNothing) {
  TempDir dir;
  const std::string profile = Profile(dir, "alone", {"--period", "200us"},
                                      {CILKPROF_TEST_OMP_LOCK_SHAPE, "critical", "0", "40", "500000"});
  const Json summary = JsonOf({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  ASSERT_TRUE(summary.is_object());
  if (summary.contains("locks")) {
    EXPECT_EQ(summary["locks"].value("blame_ns", 0.0), 0.0) << summary["locks"].dump(2);
    EXPECT_EQ(summary["locks"].value("wait_ns", 0.0), 0.0) << summary["locks"].dump(2);
  }
}
