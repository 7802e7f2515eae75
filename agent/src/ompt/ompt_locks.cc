#include "ompt/ompt_locks.h"

#include "agent_state.h"
#include "locks/lock_accounting.h"
#include "locks/lock_table.h"
#include "monotonic_clock.h"
#include "thread_record.h"

namespace cilkprof::agent::ompt {
namespace {

using locks::g_lock_table;
using locks::LockKind;
using locks::LockRecord;

// The thread's acquisition between mutex_acquire and mutex_acquired (a thread waits
// for one lock at a time). Written and read by the thread's own callbacks only.
struct PendingAcquisition {
  uintptr_t lock = 0;              // the wait_id; 0: none
  LockRecord* record = nullptr;    // registered as a waiter of it (BeginWait); null: not
  uint64_t t0 = 0;
  LockKind kind = LockKind::kOmpLock;
  bool try_only = false;           // omp_test_lock, omp_test_nest_lock: never waits
};
__thread PendingAcquisition tls_pending __attribute__((tls_model("initial-exec")));

// Accounted kinds, with whether the call only tries the lock.
bool KindOf(ompt_mutex_t kind, LockKind* out, bool* try_only) {
  *try_only = kind == ompt_mutex_test_lock || kind == ompt_mutex_test_nest_lock;
  switch (kind) {
    case ompt_mutex_lock:
    case ompt_mutex_test_lock:
      *out = LockKind::kOmpLock;
      return true;
    case ompt_mutex_nest_lock:
    case ompt_mutex_test_nest_lock:
      *out = LockKind::kOmpNestLock;
      return true;
    case ompt_mutex_critical:
      *out = LockKind::kOmpCritical;
      return true;
    default:  // atomic, ordered: no holder releases them for a waiter
      return false;
  }
}

uintptr_t Self(ThreadRecord* t) { return reinterpret_cast<uintptr_t>(t); }

// A pending acquisition that ends without the lock: an omp_test_lock that failed (it
// was never registered), or, defensively, a registered wait whose acquired never came:
// deregistered, its time a wait without an acquisition (as a timed-out pthread wait).
void Abandon(ThreadRecord* t, PendingAcquisition* p) {
  if (p->record != nullptr) {
    locks::UnmarkWaiting(t);
    uint64_t unblamed = 0;
    const uint64_t wait = g_lock_table.EndWait(p->record, p->t0, MonotonicNs, &unblamed);
    locks::ChargeWait(t, p->record, wait, unblamed, /*acquired=*/false);
  }
  p->lock = 0;
  p->record = nullptr;
}

void OnMutexAcquire(ompt_mutex_t kind, unsigned int /*hint*/, unsigned int /*impl*/, ompt_wait_id_t wait_id,
                    const void* codeptr_ra) {
  LockKind lock_kind;
  bool try_only = false;
  if (!KindOf(kind, &lock_kind, &try_only)) return;
  ThreadRecord* t = locks::AccountedThread(codeptr_ra);
  if (t == nullptr) return;
  locks::BookkeepingScope scope;
  PendingAcquisition* p = &tls_pending;
  if (p->lock != 0) Abandon(t, p);
  const auto lock = static_cast<uintptr_t>(wait_id);
  p->lock = lock;
  p->kind = lock_kind;
  p->try_only = try_only;
  p->record = nullptr;
  if (try_only) return;  // its acquired, if any, counts an uncontended acquisition
  // Only a lock that was contended before has a record: then register, so that the
  // releases during this wait hand out its blame; else only note the time.
  if (g_lock_table.size() != 0) p->record = g_lock_table.Find(lock);
  p->t0 = p->record != nullptr ? g_lock_table.BeginWait(p->record, MonotonicNs) : MonotonicNs();
  locks::MarkWaiting(t, lock, p->t0);
}

// mutex_acquired, or nest_lock scope_begin (a nest lock the thread owns already).
void Acquired(ompt_wait_id_t wait_id) {
  PendingAcquisition* p = &tls_pending;
  const auto lock = static_cast<uintptr_t>(wait_id);
  if (p->lock != lock || p->lock == 0) return;  // its acquire was not accounted
  ThreadRecord* t = tls_thread;
  if (t == nullptr) return;
  locks::BookkeepingScope scope;
  if (!p->try_only) locks::UnmarkWaiting(t);
  LockRecord* r = p->record;
  const bool registered = r != nullptr;
  const uint64_t t0 = p->try_only ? MonotonicNs() : p->t0;
  p->lock = 0;
  p->record = nullptr;
  if (r == nullptr && g_lock_table.size() != 0) r = g_lock_table.Find(lock);
  if (r == nullptr) {
    // Never contended so far. A long acquisition may be its first contention, or only a
    // slow acquisition (lazy binding, a page fault, preemption): it gives the lock its
    // record, not a counted wait (AcquireReported: no other holder is known).
    if (MonotonicNs() - t0 < kContendedNs) {
      locks::CountUncontendedAcquisition(t, reinterpret_cast<const void*>(lock));
      return;
    }
    r = g_lock_table.FindOrInsert(lock, p->kind);
    if (r == nullptr) return;  // no memory for a record: not measured
  }
  const locks::LockTable::Acquisition a = g_lock_table.AcquireReported(r, registered, t0, Self(t), MonotonicNs, kContendedNs);
  if (!a.waited) {
    locks::CountUncontendedAcquisition(t, reinterpret_cast<const void*>(lock));
    return;
  }
  locks::ChargeWait(t, r, a.wait, a.unblamed, /*acquired=*/true);
}

void OnMutexAcquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* /*codeptr_ra*/) {
  LockKind lock_kind;
  bool try_only = false;
  if (KindOf(kind, &lock_kind, &try_only)) Acquired(wait_id);
}

void OnNestLock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void* /*codeptr_ra*/) {
  // scope_begin: a re-acquisition by the owner (no wait; its registration, if any, ends);
  // scope_end: a release that keeps the lock.
  if (endpoint == ompt_scope_begin) Acquired(wait_id);
}

void OnMutexReleased(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr_ra) {
  LockKind lock_kind;
  bool try_only = false;
  if (!KindOf(kind, &lock_kind, &try_only)) return;
  if (g_lock_table.size() == 0) return;  // no lock was ever contended
  ThreadRecord* t = locks::AccountedThread(codeptr_ra);
  if (t == nullptr) return;
  const auto lock = static_cast<uintptr_t>(wait_id);
  LockRecord* r = g_lock_table.Find(lock);
  if (r == nullptr) return;
  locks::BookkeepingScope scope;
  const uint64_t blame = g_lock_table.ReleaseReported(r, Self(t), MonotonicNs);
  // At the release site: this callback runs inside the runtime's release call, after it.
  if (blame != 0) locks::ChargeBlame(t, lock, blame);
}

// omp_init_lock / omp_destroy_lock (and the nest forms): a lock at a reused address
// starts over (its row continues, as a destroyed pthread mutex's does).
void OnLockInit(ompt_mutex_t /*kind*/, unsigned int /*hint*/, unsigned int /*impl*/, ompt_wait_id_t wait_id,
                const void* /*codeptr_ra*/) {
  if (g_lock_table.size() != 0) locks::ForgetDestroyedLock(reinterpret_cast<void*>(wait_id));
}

void OnLockDestroy(ompt_mutex_t /*kind*/, ompt_wait_id_t wait_id, const void* /*codeptr_ra*/) {
  if (g_lock_table.size() != 0) locks::ForgetDestroyedLock(reinterpret_cast<void*>(wait_id));
}

}  // namespace

void RegisterMutexCallbacks(ompt_set_callback_t set) {
  set(ompt_callback_mutex_acquire, reinterpret_cast<ompt_callback_t>(&OnMutexAcquire));
  set(ompt_callback_mutex_acquired, reinterpret_cast<ompt_callback_t>(&OnMutexAcquired));
  set(ompt_callback_mutex_released, reinterpret_cast<ompt_callback_t>(&OnMutexReleased));
  set(ompt_callback_nest_lock, reinterpret_cast<ompt_callback_t>(&OnNestLock));
  set(ompt_callback_lock_init, reinterpret_cast<ompt_callback_t>(&OnLockInit));
  set(ompt_callback_lock_destroy, reinterpret_cast<ompt_callback_t>(&OnLockDestroy));
}

}  // namespace cilkprof::agent::ompt
