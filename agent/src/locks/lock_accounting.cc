#include "locks/lock_accounting.h"

#include <errno.h>
#include <signal.h>
#include <ucontext.h>

#include "adopted_threads.h"
#include "agent_state.h"
#include "blame.h"
#include "runtime_view.h"
#include "sample_interval.h"
#include "real_functions.h"
#include "signal_mask.h"

namespace cilkprof::agent::locks {
namespace {

// Nonzero while the thread is inside this bookkeeping: lock calls made meanwhile (by a
// signal handler, or by the unwinder) go straight to the real functions.
__thread int tls_lock_depth __attribute__((tls_model("initial-exec"))) = 0;

// Whether the task-parallel runtime's library (or another module whose frames the
// unwinder elides) made the call: the runtime's own locks are its scheduling, not the
// program's contention.
bool CalledFromElidedCode(const void* caller) {
  uint32_t count = 0;
  const unwinder::CodeRange* ranges = ElidedRanges(&count);
  for (uint32_t i = 0; i < count; ++i) {
    if (ranges[i].Contains(reinterpret_cast<uintptr_t>(caller))) return true;
  }
  return false;
}

void Add(uint64_t* total, uint64_t value) { __atomic_fetch_add(total, value, __ATOMIC_RELAXED); }

uint64_t Period() { return g_state->sampler.period_ns; }

// One synchronous charge of the lock clocks: the context of this frame, unwound as the
// probe's is (runtime_attach.cc), with the sampling handler kept off the record. The
// sampling signal is blocked meanwhile, so that a sample falling due during the unwind
// is taken just after it instead of being dropped as re-entrant (2.6% of lock_contention's
// samples were, at a 200 us period).
__attribute__((noinline)) void ChargeNow(ThreadRecord* t, uintptr_t lock, MetricId metric, uint64_t amount) {
  sigset_t sampling, previous;
  sigemptyset(&sampling);
  const int signo = KeptSignal();
  if (signo > 0) sigaddset(&sampling, signo);
  real::pthread_sigmask()(SIG_BLOCK, &sampling, &previous);
  t->in_handler = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  ucontext_t context;
  const unwinder::Mode mode = tls_in_loader != 0 ? unwinder::Mode::kFramePointer : g_handler_mode;
  if (getcontext(&context) == 0) {
    const FaultSignalsOpen faults(&context);  // a fault in the walk must reach the guard
    ChargeLock(t, &context, mode, lock, metric, amount);
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t->in_handler = 0;
  real::pthread_sigmask()(SIG_SETMASK, &previous, nullptr);
}

void Advance(ThreadRecord* t, LockClock* clock, uintptr_t lock, MetricId metric, uint64_t amount) {
  const uint64_t period = Period();
  if (t->lock_clock_rng == 0) t->lock_clock_rng = SeedSampleIntervals(static_cast<uint64_t>(t->tid), 0x10c6);
  const uint64_t crossings = AdvanceLockClock(clock, amount, period, &t->lock_clock_rng);
  if (crossings != 0) ChargeNow(t, lock, metric, crossings * period);
}

// A measured wait of `wait` ns for `lock`. With --clock wall the sampler samples the
// waiting thread (its samples are lock_wait already): the wait only goes to the exact
// counters. Otherwise all of it advances the wait clock: the handler leaves a waiting
// thread's CPU samples out of the tree (blame.cc, TakeSample).
void AdvanceWaitClock(ThreadRecord* t, uintptr_t lock, uint64_t wait) {
  if (g_state->config.clock == ClockKind::kWall && g_state->sampler.sampled) return;
  Advance(t, &t->lock_wait_clock, lock, kMetricLockWait, wait);
}

}  // namespace

ThreadRecord* AccountedThread(const void* caller) {
  ThreadRecord* t = tls_thread;
  // A thread the agent adopted (adopted_threads.h) before its first sample claimed it.
  if (t == nullptr) t = ClaimAdoptedRecord();
  if (t == nullptr || tls_lock_depth != 0 || t->in_handler) return nullptr;
  if (__atomic_load_n(&g_sampling, __ATOMIC_RELAXED) == 0 || CalledFromHandlerCode(caller)) return nullptr;
  if (!g_state->config.locks) return nullptr;  // CILKPROF_LOCKS=0: waits go unmeasured
  if (CalledFromElidedCode(caller)) return nullptr;
  return t;
}

BookkeepingScope::BookkeepingScope() : saved_errno_(errno) { ++tls_lock_depth; }
BookkeepingScope::~BookkeepingScope() {
  --tls_lock_depth;
  errno = saved_errno_;
}

void SampleAcquisition(ThreadRecord* t, const void* lock) {
  // The lock clocks' generator (sample_interval.h), seeded once per thread.
  if (t->lock_clock_rng == 0) t->lock_clock_rng = SeedSampleIntervals(static_cast<uint64_t>(t->tid), 0x10c6);
  const uint64_t x = NextRandom(&t->lock_clock_rng);
  const uint32_t weight = t->acquisition_interval;  // the interval this acquisition ends
  const auto next = static_cast<uint32_t>(1 + x % (2 * kAcquisitionSampleMean - 1));
  t->acquisition_interval = next;
  t->acquisition_countdown = static_cast<int32_t>(next);
  if (weight == 0 || g_lock_table.size() == 0) return;
  if (LockRecord* r = g_lock_table.Find(reinterpret_cast<uintptr_t>(lock))) Add(&r->acquisitions, weight);
}

void MarkWaiting(ThreadRecord* t, uintptr_t lock, uint64_t since) {
  __atomic_store_n(&t->waiting_since_ns, since, __ATOMIC_RELAXED);
  __atomic_store_n(&t->waiting_lock, lock, __ATOMIC_RELEASE);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void UnmarkWaiting(ThreadRecord* t) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&t->waiting_lock, uintptr_t{0}, __ATOMIC_RELEASE);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void ChargeWait(ThreadRecord* t, LockRecord* r, uint64_t wait, uint64_t unblamed, bool acquired) {
  SampleCounters* c = &t->counters;
  CounterAdd(&c->lock_wait_ns, wait);
  CounterAdd(&c->lock_unblamed_ns, unblamed);
  if (acquired) {
    CountAcquisitionOf(&c->lock_acquisitions);
    CounterAdd(&c->lock_contended, 1);
    Add(&r->contended, 1);
  }
  AdvanceWaitClock(t, r->address, wait);
}

void ChargeBlame(ThreadRecord* t, uintptr_t lock, uint64_t blame) {
  CounterAdd(&t->counters.lock_blame_ns, blame);
  Advance(t, &t->lock_blame_clock, lock, kMetricLockBlame, blame);
}

int ContendedAcquire(void* lock, LockKind kind, const void* caller, AcquireFn acquire, const void* args) {
  ThreadRecord* t = AccountedThread(caller);
  if (t == nullptr) return acquire(lock, args);
  BookkeepingScope scope;
  LockRecord* r = g_lock_table.FindOrInsert(reinterpret_cast<uintptr_t>(lock), kind);
  if (r == nullptr) return acquire(lock, args);  // no memory for a record: not measured
  const uint64_t t0 = g_lock_table.BeginWait(r, MonotonicNs);
  MarkWaiting(t, reinterpret_cast<uintptr_t>(lock), t0);
  const int rc = acquire(lock, args);
  UnmarkWaiting(t);
  uint64_t unblamed = 0;
  const uint64_t wait = g_lock_table.EndWait(r, t0, MonotonicNs, &unblamed);
  // A robust mutex whose owner died is acquired all the same.
  const bool acquired = rc == 0 || (kind == LockKind::kMutex && rc == EOWNERDEAD);
  if (!acquired && rc == ETIMEDOUT) Add(&r->timeouts, 1);
  ChargeWait(t, r, wait, unblamed, acquired);
  return rc;
}

int ContendedRelease(void* lock, const void* caller, ReleaseFn release) {
  ThreadRecord* t = AccountedThread(caller);
  if (t == nullptr) return release(lock);
  LockRecord* r = g_lock_table.Find(reinterpret_cast<uintptr_t>(lock));
  if (r == nullptr || __atomic_load_n(&r->n_waiters, __ATOMIC_RELAXED) == 0) return release(lock);
  BookkeepingScope scope;
  const uint64_t blame = g_lock_table.Release(r, MonotonicNs);
  const int rc = release(lock);
  // Charged after the real unlock: the unwind does not lengthen the critical section.
  if (blame != 0) ChargeBlame(t, reinterpret_cast<uintptr_t>(lock), blame);
  return rc;
}

int AccountedCondWait(void* cond, void* mutex, const void* caller, CondWaitCallFn wait, const void* args) {
  ThreadRecord* t = AccountedThread(caller);
  if (t == nullptr) return wait(cond, mutex, args);
  const int saved_errno = errno;
  ++tls_lock_depth;
  // The wait releases the mutex: the blame of its waiters, as at an unlock.
  uint64_t blame = 0;
  if (g_lock_table.waiters() != 0) {
    LockRecord* m = g_lock_table.Find(reinterpret_cast<uintptr_t>(mutex));
    if (m != nullptr && __atomic_load_n(&m->n_waiters, __ATOMIC_RELAXED) != 0) {
      blame = g_lock_table.Release(m, MonotonicNs);
    }
  }
  LockRecord* c = g_lock_table.FindOrInsert(reinterpret_cast<uintptr_t>(cond), LockKind::kCond);
  if (c != nullptr) g_lock_table.BeginCondWait(c);
  const uint64_t start = MonotonicNs();
  const int rc = wait(cond, mutex, args);
  const uint64_t woken = MonotonicNs();
  uint64_t signaled = 0;
  if (c != nullptr) {
    signaled = __atomic_load_n(&c->last_signal_ns, __ATOMIC_RELAXED);
    g_lock_table.EndCondWait(c);
  }
  SampleCounters* counters = &t->counters;
  if (rc == 0 || rc == ETIMEDOUT) CountAcquisitionOf(&counters->lock_acquisitions);  // re-acquired
  // Woken by a signal during the wait: from the signal to the return, the thread waited
  // for the mutex. No release accounts for it (unblamed). A timeout or a spurious
  // wake-up adds nothing.
  if (rc == 0 && signaled >= start && woken > signaled) {
    const uint64_t reacquire = woken - signaled;
    CounterAdd(&counters->lock_contended, 1);
    CounterAdd(&counters->lock_wait_ns, reacquire);
    CounterAdd(&counters->lock_unblamed_ns, reacquire);
    LockRecord* m = g_lock_table.FindOrInsert(reinterpret_cast<uintptr_t>(mutex), LockKind::kMutex);
    if (m != nullptr) {
      Add(&m->contended, 1);
      Add(&m->wait_ns, reacquire);
    }
    AdvanceWaitClock(t, reinterpret_cast<uintptr_t>(mutex), reacquire);
  }
  if (blame != 0) {
    CounterAdd(&counters->lock_blame_ns, blame);
    Advance(t, &t->lock_blame_clock, reinterpret_cast<uintptr_t>(mutex), kMetricLockBlame, blame);
  }
  --tls_lock_depth;
  errno = saved_errno;
  return rc;
}

void NoteCondSignal(void* cond) {
  LockRecord* c = g_lock_table.Find(reinterpret_cast<uintptr_t>(cond));
  if (c == nullptr || __atomic_load_n(&c->cond_waiters, __ATOMIC_RELAXED) == 0) return;
  __atomic_store_n(&c->last_signal_ns, MonotonicNs(), __ATOMIC_RELAXED);
}

void ForgetDestroyedLock(void* lock) {
  LockRecord* r = g_lock_table.Find(reinterpret_cast<uintptr_t>(lock));
  if (r != nullptr) g_lock_table.ForgetWaiters(r);
}

}  // namespace cilkprof::agent::locks
