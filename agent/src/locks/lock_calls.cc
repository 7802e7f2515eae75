// The lock functions libcilkprof_agent.so exports and so interposes (issue 14; design
// in docs/AGENT.md "Lock blame", contended paths in lock_accounting.h):
//   pthread_mutex_lock/trylock/timedlock/clocklock/unlock/destroy
//   pthread_rwlock_rdlock/wrlock/tryrdlock/trywrlock/timedrdlock/timedwrlock/
//                 clockrdlock/clockwrlock/unlock
//   pthread_spin_lock/trylock/unlock
//   pthread_cond_wait/timedwait/clockwait/signal/broadcast
//
// Fast paths. A mutex acquisition first reads the lock word: 0 is free in every glibc
// mutex kind, and then the real blocking call is made (glibc's trylock costs about 5 ns
// more than its lock: measured with bench/locks/run.sh). Otherwise, and for rwlocks
// (whose free state is not one word) and spinlocks, the real trylock decides. Either
// way the only extra work of an uncontended acquisition is a thread-local count:
// nothing shared is touched, nothing timed, nothing unwound. A release reads one
// process-wide count (relaxed) of threads registered as waiting for some lock; while
// it is 0 the real unlock is all that runs. A busy lock word with a failed trylock
// (EBUSY) takes the contended path, which blocks in the real blocking call. The price
// of reading the word: a thread that finds the lock free and loses it to another in
// the few nanoseconds before its own acquisition waits unmeasured (in neither lock_wait
// nor blame, so the conservation holds; docs/AGENT.md "Lock blame", limits).
// A trylock the program makes itself is never a wait: a failure returns at once.
// With the agent inactive, every function behaves as the real one (the contended path
// sees no thread record and makes the real blocking call).
// This file is built with frame pointers (lock_accounting.h says why).
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "agent_state.h"
#include "locks/lock_accounting.h"
#include "real_functions.h"

#define CILKPROF_EXPORT extern "C" __attribute__((visibility("default")))

using namespace cilkprof::agent;
using cilkprof::agent::locks::LockKind;

namespace {

// The real functions of the fast paths, cached here so that each call costs one load
// and an indirect call (real_functions.h resolves them; ResolveAll runs them first).
real::MutexFn g_mutex_lock = nullptr;
real::MutexFn g_mutex_trylock = nullptr;
real::MutexFn g_mutex_unlock = nullptr;
real::RwlockFn g_rwlock_tryrdlock = nullptr;
real::RwlockFn g_rwlock_trywrlock = nullptr;
real::RwlockFn g_rwlock_unlock = nullptr;
real::SpinFn g_spin_trylock = nullptr;
real::SpinFn g_spin_unlock = nullptr;

template <typename Fn>
inline Fn Real(Fn* slot, Fn (*resolve)()) {
  Fn fn = __atomic_load_n(slot, __ATOMIC_RELAXED);
  if (__builtin_expect(fn == nullptr, 0)) {
    fn = resolve();
    __atomic_store_n(slot, fn, __ATOMIC_RELAXED);
  }
  return fn;
}

// Counts an uncontended acquisition of `lock` in the calling thread's record (not the
// sampling handler's, nor the lock clocks' unwinding: in_handler), and now and then
// for the lock itself (lock_accounting.h, SampleAcquisition).
inline void CountAcquisition(const void* lock) {
  ThreadRecord* t = tls_thread;
  // Not while a standby agent is detached (g_sampling 0): what it counts would land in
  // the next attach window.
  if (t != nullptr && !t->in_handler && __atomic_load_n(&g_sampling, __ATOMIC_RELAXED) != 0) {
    locks::CountUncontendedAcquisition(t, lock);
  }
}

inline bool NobodyWaits() { return __builtin_expect(locks::g_lock_table.waiters() == 0, 1); }

// Acquired: 0, or a robust mutex's EOWNERDEAD.
inline bool Acquired(int rc) { return rc == 0 || rc == EOWNERDEAD; }

// The real blocking calls, as the contended path calls them.
struct TimedArgs {
  const struct timespec* abstime;
};
struct ClockArgs {
  clockid_t clock;
  const struct timespec* abstime;
};

int MutexLock(void* m, const void*) { return real::pthread_mutex_lock()(static_cast<pthread_mutex_t*>(m)); }
int MutexTimedLock(void* m, const void* a) {
  return real::pthread_mutex_timedlock()(static_cast<pthread_mutex_t*>(m), static_cast<const TimedArgs*>(a)->abstime);
}
int MutexClockLock(void* m, const void* a) {
  const auto* args = static_cast<const ClockArgs*>(a);
  return real::pthread_mutex_clocklock()(static_cast<pthread_mutex_t*>(m), args->clock, args->abstime);
}
int MutexUnlock(void* m) { return Real(&g_mutex_unlock, real::pthread_mutex_unlock)(static_cast<pthread_mutex_t*>(m)); }

int RwRdLock(void* l, const void*) { return real::pthread_rwlock_rdlock()(static_cast<pthread_rwlock_t*>(l)); }
int RwWrLock(void* l, const void*) { return real::pthread_rwlock_wrlock()(static_cast<pthread_rwlock_t*>(l)); }
int RwTimedRdLock(void* l, const void* a) {
  return real::pthread_rwlock_timedrdlock()(static_cast<pthread_rwlock_t*>(l), static_cast<const TimedArgs*>(a)->abstime);
}
int RwTimedWrLock(void* l, const void* a) {
  return real::pthread_rwlock_timedwrlock()(static_cast<pthread_rwlock_t*>(l), static_cast<const TimedArgs*>(a)->abstime);
}
int RwClockRdLock(void* l, const void* a) {
  const auto* args = static_cast<const ClockArgs*>(a);
  return real::pthread_rwlock_clockrdlock()(static_cast<pthread_rwlock_t*>(l), args->clock, args->abstime);
}
int RwClockWrLock(void* l, const void* a) {
  const auto* args = static_cast<const ClockArgs*>(a);
  return real::pthread_rwlock_clockwrlock()(static_cast<pthread_rwlock_t*>(l), args->clock, args->abstime);
}
int RwUnlock(void* l) { return Real(&g_rwlock_unlock, real::pthread_rwlock_unlock)(static_cast<pthread_rwlock_t*>(l)); }

// A registered spinning waiter spins itself, so that its wait is measured like the
// others: the real trylock, a pause, and now and then the CPU handed to another thread.
int SpinLock(void* l, const void*) {
  auto* lock = static_cast<pthread_spinlock_t*>(l);
  const real::SpinFn trylock = Real(&g_spin_trylock, real::pthread_spin_trylock);
  for (uint32_t i = 1;; ++i) {
    const int rc = trylock(lock);
    if (rc != EBUSY) return rc;
    __builtin_ia32_pause();
    if (i % 1024 == 0) sched_yield();
  }
}
int SpinUnlock(void* l) { return Real(&g_spin_unlock, real::pthread_spin_unlock)(static_cast<pthread_spinlock_t*>(l)); }

int CondWait(void* c, void* m, const void*) {
  return real::pthread_cond_wait()(static_cast<pthread_cond_t*>(c), static_cast<pthread_mutex_t*>(m));
}
int CondTimedWait(void* c, void* m, const void* a) {
  return real::pthread_cond_timedwait()(static_cast<pthread_cond_t*>(c), static_cast<pthread_mutex_t*>(m),
                                        static_cast<const TimedArgs*>(a)->abstime);
}
int CondClockWait(void* c, void* m, const void* a) {
  const auto* args = static_cast<const ClockArgs*>(a);
  return real::pthread_cond_clockwait()(static_cast<pthread_cond_t*>(c), static_cast<pthread_mutex_t*>(m),
                                        args->clock, args->abstime);
}

// The lock word: 0 when the lock is free (every glibc mutex kind keeps its owner or
// its state there, and 0 means unlocked). Not for spinlocks: on x86-64 glibc's free
// spinlock is 1 and a held one 0 or less.
inline bool LooksFree(pthread_mutex_t* m) { return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0; }

// The common shape of an acquisition: trylock, and the contended path on EBUSY.
template <typename Lock, typename TryFn>
inline int Acquire(Lock* lock, TryFn trylock, LockKind kind, locks::AcquireFn blocking, const void* args,
                   const void* caller) {
  const int rc = trylock(lock);
  if (__builtin_expect(rc == 0, 1)) {
    CountAcquisition((const void*)lock);  // (const void*): spinlocks are volatile
    return 0;
  }
  if (rc != EBUSY) {
    if (Acquired(rc)) CountAcquisition((const void*)lock);
    return rc;
  }
  return locks::ContendedAcquire((void*)lock, kind, caller, blocking, args);  // (void*): spinlocks are volatile
}

}  // namespace

#define CALLER __builtin_return_address(0)

CILKPROF_EXPORT int pthread_mutex_lock(pthread_mutex_t* m) {
  if (__builtin_expect(LooksFree(m), 1)) {
    const int rc = Real(&g_mutex_lock, real::pthread_mutex_lock)(m);
    if (__builtin_expect(rc == 0, 1) || rc == EOWNERDEAD) CountAcquisition(m);
    return rc;
  }
  return Acquire(m, Real(&g_mutex_trylock, real::pthread_mutex_trylock), LockKind::kMutex, MutexLock, nullptr,
                 CALLER);
}

CILKPROF_EXPORT int pthread_mutex_trylock(pthread_mutex_t* m) {
  const int rc = Real(&g_mutex_trylock, real::pthread_mutex_trylock)(m);
  if (Acquired(rc)) CountAcquisition(m);
  return rc;
}

CILKPROF_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* abstime) {
  const TimedArgs args{abstime};
  return Acquire(m, Real(&g_mutex_trylock, real::pthread_mutex_trylock), LockKind::kMutex, MutexTimedLock,
                 &args, CALLER);
}

CILKPROF_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clock, const struct timespec* abstime) {
  const ClockArgs args{clock, abstime};
  return Acquire(m, Real(&g_mutex_trylock, real::pthread_mutex_trylock), LockKind::kMutex, MutexClockLock,
                 &args, CALLER);
}

CILKPROF_EXPORT int pthread_mutex_unlock(pthread_mutex_t* m) {
  if (NobodyWaits()) return Real(&g_mutex_unlock, real::pthread_mutex_unlock)(m);
  return locks::ContendedRelease(m, CALLER, MutexUnlock);
}

CILKPROF_EXPORT int pthread_mutex_destroy(pthread_mutex_t* m) {
  if (locks::g_lock_table.size() != 0) locks::ForgetDestroyedLock(m);
  return real::pthread_mutex_destroy()(m);
}

CILKPROF_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  return Acquire(l, Real(&g_rwlock_tryrdlock, real::pthread_rwlock_tryrdlock), LockKind::kRwlock, RwRdLock,
                 nullptr, CALLER);
}

CILKPROF_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  return Acquire(l, Real(&g_rwlock_trywrlock, real::pthread_rwlock_trywrlock), LockKind::kRwlock, RwWrLock,
                 nullptr, CALLER);
}

CILKPROF_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) {
  const int rc = Real(&g_rwlock_tryrdlock, real::pthread_rwlock_tryrdlock)(l);
  if (rc == 0) CountAcquisition((const void*)l);
  return rc;
}

CILKPROF_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t* l) {
  const int rc = Real(&g_rwlock_trywrlock, real::pthread_rwlock_trywrlock)(l);
  if (rc == 0) CountAcquisition((const void*)l);
  return rc;
}

CILKPROF_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* l, const struct timespec* abstime) {
  const TimedArgs args{abstime};
  return Acquire(l, Real(&g_rwlock_tryrdlock, real::pthread_rwlock_tryrdlock), LockKind::kRwlock, RwTimedRdLock,
                 &args, CALLER);
}

CILKPROF_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* l, const struct timespec* abstime) {
  const TimedArgs args{abstime};
  return Acquire(l, Real(&g_rwlock_trywrlock, real::pthread_rwlock_trywrlock), LockKind::kRwlock, RwTimedWrLock,
                 &args, CALLER);
}

CILKPROF_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* l, clockid_t clock, const struct timespec* abstime) {
  const ClockArgs args{clock, abstime};
  return Acquire(l, Real(&g_rwlock_tryrdlock, real::pthread_rwlock_tryrdlock), LockKind::kRwlock, RwClockRdLock,
                 &args, CALLER);
}

CILKPROF_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* l, clockid_t clock, const struct timespec* abstime) {
  const ClockArgs args{clock, abstime};
  return Acquire(l, Real(&g_rwlock_trywrlock, real::pthread_rwlock_trywrlock), LockKind::kRwlock, RwClockWrLock,
                 &args, CALLER);
}

CILKPROF_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* l) {
  if (NobodyWaits()) return Real(&g_rwlock_unlock, real::pthread_rwlock_unlock)(l);
  return locks::ContendedRelease(l, CALLER, RwUnlock);
}

CILKPROF_EXPORT int pthread_spin_lock(pthread_spinlock_t* l) {
  return Acquire(l, Real(&g_spin_trylock, real::pthread_spin_trylock), LockKind::kSpin, SpinLock, nullptr, CALLER);
}

CILKPROF_EXPORT int pthread_spin_trylock(pthread_spinlock_t* l) {
  const int rc = Real(&g_spin_trylock, real::pthread_spin_trylock)(l);
  if (rc == 0) CountAcquisition((const void*)l);
  return rc;
}

CILKPROF_EXPORT int pthread_spin_unlock(pthread_spinlock_t* l) {
  if (NobodyWaits()) return Real(&g_spin_unlock, real::pthread_spin_unlock)(l);
  return locks::ContendedRelease((void*)l, CALLER, SpinUnlock);
}

CILKPROF_EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  return locks::AccountedCondWait(c, m, CALLER, CondWait, nullptr);
}

CILKPROF_EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* abstime) {
  const TimedArgs args{abstime};
  return locks::AccountedCondWait(c, m, CALLER, CondTimedWait, &args);
}

CILKPROF_EXPORT int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                                           const struct timespec* abstime) {
  const ClockArgs args{clock, abstime};
  return locks::AccountedCondWait(c, m, CALLER, CondClockWait, &args);
}

CILKPROF_EXPORT int pthread_cond_signal(pthread_cond_t* c) {
  if (locks::g_lock_table.cond_waiters() != 0) locks::NoteCondSignal(c);
  return real::pthread_cond_signal()(c);
}

CILKPROF_EXPORT int pthread_cond_broadcast(pthread_cond_t* c) {
  if (locks::g_lock_table.cond_waiters() != 0) locks::NoteCondSignal(c);
  return real::pthread_cond_broadcast()(c);
}
