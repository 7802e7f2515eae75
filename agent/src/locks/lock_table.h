// The lock records of issue 14 (lock blame; docs/AGENT.md "Lock blame"): one record
// per lock object some thread had to wait for (or condition variable some thread waited
// on), found by the object's address, and the blame arithmetic done on it.
//
// The table is lock-free and allocation-free (signal handlers may lock, and so may the
// code a sample interrupted): chained buckets whose heads are swung with compare-and-
// swap, records carved from mmap'd chunks and never freed, so a record found is valid
// for good and readers need no protection. Nothing is ever dropped: any number of
// distinct locks, on colliding buckets or not, each get their own record; memory grows
// with the number of distinct contended locks, never with the number of acquisitions.
//
// Blame (HPCToolkit's directed blame, made lossless): a waiter registers (n_waiters += 1,
// sum_start += t0); a release at t1 hands out blame = n_waiters * t1 - sum_start (the
// time every registered waiter waited since it registered or since the previous
// release, whichever is later) and sets sum_start = n_waiters * t1; a waiter that gets
// the lock at t2 deregisters with start = max(t0, last_release) and keeps
// t2 - start as unblamed (the hand-off). Every wait is thus split exactly between the
// releases it waited through and its unblamed tail. Times are read under the record's
// spinlock, so they are ordered exactly as the registrations and releases are.
#pragma once

#include <cstddef>
#include <cstdint>

#include "monotonic_clock.h"

namespace cilkprof::agent::locks {

// The wire's LockKind (wire.proto) for all but kCond: a condition variable's record
// (last signal time), never reported as a lock. The OpenMP kinds come from OMPT's mutex
// callbacks (ompt/ompt_locks.h): omp_lock_t, omp_nest_lock_t, a critical construct.
enum class LockKind : uint8_t {
  kMutex = 0,
  kRwlock = 1,
  kSpin = 2,
  kOmpLock = 3,
  kOmpNestLock = 4,
  kOmpCritical = 5,
  kCond = 255,
};

using ClockFn = uint64_t (*)();

struct LockRecord {
  uintptr_t address = 0;  // the key; immutable once published
  LockKind kind = LockKind::kMutex;
  uint32_t spin = 0;  // the record's own spinlock (never held across a call out)
  // Under `spin`.
  uint64_t n_waiters = 0;
  uint64_t sum_start = 0;
  uint64_t last_release = 0;
  // Under `spin`, for runtimes that report a release only after it happened (OMPT's
  // mutex_released; AcquireReported below): the thread (its ThreadRecord) that acquired
  // the lock last and has not reported its release yet, and the blame a waiter booked
  // for such a holder when it got the lock first, which that holder collects.
  uintptr_t holder = 0;
  uintptr_t unbooked_owner = 0;
  uint64_t unbooked_blame = 0;
  // Exact totals (relaxed atomic adds; the flusher reads them).
  uint64_t contended = 0;
  uint64_t wait_ns = 0;
  uint64_t blame_ns = 0;
  uint64_t timeouts = 0;
  // Uncontended acquisitions, estimated by sampling (lock_accounting.h, SampleAcquisition).
  uint64_t acquisitions = 0;
  // Condition variables: threads in a wait on it, and the last signal/broadcast time
  // while there were (relaxed atomics).
  uint64_t cond_waiters = 0;
  uint64_t last_signal_ns = 0;
  // The flusher's: what it has reported, and the lock's resolved identity.
  uint64_t sent_contended = 0, sent_wait_ns = 0, sent_blame_ns = 0, sent_timeouts = 0, sent_acquisitions = 0;
  bool resolved = false;
  uint32_t module_id = 0;
  uint64_t offset = 0;
  // Links: the bucket's chain, and every record (newest first).
  LockRecord* bucket_next = nullptr;
  LockRecord* all_next = nullptr;
};

class LockTable {
 public:
  // 2^bucket_bits buckets, mapped at the first insert. Constant-initialized, so that a
  // global table is usable before any constructor ran.
  constexpr explicit LockTable(uint32_t bucket_bits = 16) : bucket_bits_(bucket_bits) {}
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;

  // The record of `address`, or nullptr. Lock-free, async-signal-safe.
  LockRecord* Find(uintptr_t address) const;
  // The record of `address`, created (with `kind`) if there is none; nullptr only when
  // memory cannot be mapped. Lock-free, async-signal-safe (it may call mmap).
  LockRecord* FindOrInsert(uintptr_t address, LockKind kind);
  // Every record, newest first (follow all_next). Any thread.
  LockRecord* first() const { return __atomic_load_n(&all_, __ATOMIC_ACQUIRE); }
  size_t size() const { return __atomic_load_n(&count_, __ATOMIC_RELAXED); }

  // Threads registered as waiting for some lock, or in a condition wait: the unlock
  // and signal fast paths read these (relaxed) and do nothing more while they are 0.
  uint64_t waiters() const { return __atomic_load_n(&waiters_, __ATOMIC_RELAXED); }
  uint64_t cond_waiters() const { return __atomic_load_n(&cond_waiters_, __ATOMIC_RELAXED); }

  // Blame arithmetic (top of this file). `now` is read under the record's spinlock.
  // BeginWait returns t0; EndWait returns the wait (t2 - t0) and stores the unblamed
  // part; Release returns the blame handed out (0 when nobody waited).
  uint64_t BeginWait(LockRecord* r, ClockFn now);
  uint64_t EndWait(LockRecord* r, uint64_t t0, ClockFn now, uint64_t* unblamed);
  uint64_t Release(LockRecord* r, ClockFn now);

  // The same arithmetic for a runtime that reports its lock calls through callbacks
  // after the fact (OMPT: mutex_acquire before the runtime's blocking acquisition,
  // mutex_acquired after it, mutex_released after the real release; ompt/ompt_locks.cc).
  // `self` identifies the calling thread (its ThreadRecord).
  //
  // A thread that gets the lock before its previous holder reported the release does
  // that release's arithmetic itself, at its own acquisition time, and books the blame
  // for the holder (unbooked_*), which the holder's report collects: otherwise every
  // waiter that wins the race against the holder's callback would deregister first and
  // keep its whole wait unblamed. AcquireReported returns the acquisition's wait (t2 -
  // t0) and its unblamed part, and whether it counts as a wait. Registered (t0 from
  // BeginWait): when some release's blame covered part of it (then it must, for
  // conservation), or another thread held the lock by the record (its release booked
  // here). Not registered (t0 read before the lock had a record): when another thread
  // held it by the record and it lasted `contended_ns` or more, all of it unblamed.
  // Otherwise (an uncontended acquisition, however slow) nothing of it is counted: no
  // blame covered it, so dropping it keeps the totals exact.
  struct Acquisition {
    uint64_t wait = 0;
    uint64_t unblamed = 0;
    bool waited = false;
  };
  Acquisition AcquireReported(LockRecord* r, bool registered, uint64_t t0, uintptr_t self, ClockFn now,
                              uint64_t contended_ns);
  // The holder `self` reports its release: the release arithmetic, if it still holds
  // the lock by the record (no waiter booked the release already), plus what waiters
  // booked for it. Returns its blame.
  uint64_t ReleaseReported(LockRecord* r, uintptr_t self, ClockFn now);
  // Condition waits, for the signal fast path.
  void BeginCondWait(LockRecord* cond);
  void EndCondWait(LockRecord* cond);

  // pthread_mutex_destroy: the lock's waiters are forgotten (a new lock at the same
  // address continues the same record from scratch).
  void ForgetWaiters(LockRecord* r);
  // A fork child: the waiting threads do not exist there; every record's waiter state
  // and spinlock, and the process-wide counts, start over. Only the forking thread runs.
  void ResetAfterFork();

 private:
  struct Chunk;
  LockRecord* Allocate();
  LockRecord** Buckets() const { return __atomic_load_n(&buckets_, __ATOMIC_ACQUIRE); }
  LockRecord** MapBuckets();
  uint32_t BucketOf(uintptr_t address) const;

  uint32_t bucket_bits_;
  LockRecord** buckets_ = nullptr;
  Chunk* chunk_ = nullptr;        // the chunk records are carved from
  LockRecord* spare_ = nullptr;   // a record allocated by an insert that lost a race
  LockRecord* all_ = nullptr;
  size_t count_ = 0;
  uint64_t waiters_ = 0;
  uint64_t cond_waiters_ = 0;
};

// The process's table (interposed lock functions, flusher).
extern LockTable g_lock_table;

}  // namespace cilkprof::agent::locks
