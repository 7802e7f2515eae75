#include "locks/lock_table.h"

#include <sys/mman.h>
#include <time.h>

#include <new>

namespace cilkprof::agent::locks {

LockTable g_lock_table;

namespace {

constexpr size_t kChunkBytes = 64u << 10;

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// The record's spinlock. Held for a few loads and stores and a clock read, never
// across a call that could block or lock.
void Lock(LockRecord* r) {
  while (__atomic_exchange_n(&r->spin, 1u, __ATOMIC_ACQUIRE) != 0) {
    while (__atomic_load_n(&r->spin, __ATOMIC_RELAXED) != 0) __builtin_ia32_pause();
  }
}
void Unlock(LockRecord* r) { __atomic_store_n(&r->spin, 0u, __ATOMIC_RELEASE); }

void Add(uint64_t* total, uint64_t value) { __atomic_fetch_add(total, value, __ATOMIC_RELAXED); }

}  // namespace

struct LockTable::Chunk {
  Chunk* previous;
  uint32_t used;  // records handed out (may pass kRecords: then the chunk is full)
  static constexpr uint32_t kRecords =
      static_cast<uint32_t>((kChunkBytes - 64) / sizeof(LockRecord));
  alignas(64) LockRecord records[1];  // kRecords of them
};

uint32_t LockTable::BucketOf(uintptr_t address) const {
  if (bucket_bits_ == 0) return 0;
  const uint64_t h = uint64_t{address} * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(h >> (64 - bucket_bits_));
}

LockRecord** LockTable::MapBuckets() {
  LockRecord** buckets = Buckets();
  if (buckets != nullptr) return buckets;
  auto* fresh = static_cast<LockRecord**>(MapZeroed(sizeof(LockRecord*) << bucket_bits_));
  if (fresh == nullptr) return nullptr;
  LockRecord** expected = nullptr;
  if (__atomic_compare_exchange_n(&buckets_, &expected, fresh, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    return fresh;
  }
  munmap(fresh, sizeof(LockRecord*) << bucket_bits_);
  return expected;
}

LockRecord* LockTable::Allocate() {
  LockRecord* spare = __atomic_exchange_n(&spare_, nullptr, __ATOMIC_ACQ_REL);
  if (spare != nullptr) return spare;
  for (;;) {
    Chunk* chunk = __atomic_load_n(&chunk_, __ATOMIC_ACQUIRE);
    if (chunk != nullptr) {
      const uint32_t i = __atomic_fetch_add(&chunk->used, 1u, __ATOMIC_RELAXED);
      if (i < Chunk::kRecords) return new (&chunk->records[i]) LockRecord();
    }
    auto* fresh = static_cast<Chunk*>(MapZeroed(kChunkBytes));
    if (fresh == nullptr) return nullptr;
    fresh->previous = chunk;
    if (!__atomic_compare_exchange_n(&chunk_, &chunk, fresh, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
      munmap(fresh, kChunkBytes);  // another thread mapped one first: use it
    }
  }
}

LockRecord* LockTable::Find(uintptr_t address) const {
  LockRecord** buckets = Buckets();
  if (buckets == nullptr) return nullptr;
  for (LockRecord* r = __atomic_load_n(&buckets[BucketOf(address)], __ATOMIC_ACQUIRE); r != nullptr;
       r = r->bucket_next) {
    if (r->address == address) return r;
  }
  return nullptr;
}

LockRecord* LockTable::FindOrInsert(uintptr_t address, LockKind kind) {
  LockRecord** buckets = MapBuckets();
  if (buckets == nullptr) return nullptr;
  LockRecord** head = &buckets[BucketOf(address)];
  LockRecord* fresh = nullptr;
  for (;;) {
    LockRecord* first = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    for (LockRecord* r = first; r != nullptr; r = r->bucket_next) {
      if (r->address != address) continue;
      // Another thread inserted it first: keep ours for the next insert.
      if (fresh != nullptr) __atomic_store_n(&spare_, fresh, __ATOMIC_RELEASE);
      return r;
    }
    if (fresh == nullptr) {
      fresh = Allocate();
      if (fresh == nullptr) return nullptr;
      fresh->address = address;
      fresh->kind = kind;
    }
    fresh->bucket_next = first;
    if (__atomic_compare_exchange_n(head, &first, fresh, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) break;
  }
  LockRecord* all = __atomic_load_n(&all_, __ATOMIC_ACQUIRE);
  do {
    fresh->all_next = all;
  } while (!__atomic_compare_exchange_n(&all_, &all, fresh, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
  __atomic_fetch_add(&count_, 1, __ATOMIC_RELAXED);
  return fresh;
}

uint64_t LockTable::BeginWait(LockRecord* r, ClockFn now) {
  Lock(r);
  const uint64_t t0 = now();
  r->n_waiters += 1;
  r->sum_start += t0;
  __atomic_fetch_add(&waiters_, 1, __ATOMIC_RELAXED);
  Unlock(r);
  return t0;
}

uint64_t LockTable::EndWait(LockRecord* r, uint64_t t0, ClockFn now, uint64_t* unblamed) {
  Lock(r);
  const uint64_t t2 = now();
  const uint64_t start = t0 > r->last_release ? t0 : r->last_release;
  *unblamed = t2 - start;
  if (r->n_waiters > 0) {  // 0: the lock was destroyed meanwhile (ForgetWaiters)
    r->n_waiters -= 1;
    r->sum_start -= start;
    __atomic_fetch_sub(&waiters_, 1, __ATOMIC_RELAXED);
  }
  Unlock(r);
  const uint64_t wait = t2 - t0;
  Add(&r->wait_ns, wait);
  return wait;
}

uint64_t LockTable::Release(LockRecord* r, ClockFn now) {
  Lock(r);
  uint64_t blame = 0;
  if (r->n_waiters > 0) {
    const uint64_t t1 = now();
    blame = r->n_waiters * t1 - r->sum_start;
    r->sum_start = r->n_waiters * t1;
    r->last_release = t1;
  }
  Unlock(r);
  if (blame != 0) Add(&r->blame_ns, blame);
  return blame;
}

LockTable::Acquisition LockTable::AcquireReported(LockRecord* r, bool registered, uint64_t t0, uintptr_t self,
                                                   ClockFn now, uint64_t contended_ns) {
  Acquisition a;
  Lock(r);
  const uint64_t t2 = now();
  const uintptr_t previous = r->holder;
  // The previous holder released (this thread has the lock) but has not reported it:
  // book its release now. A slot still held for another holder (its report is later
  // than a whole critical section: practically never) leaves the waits unblamed.
  if (previous != 0 && previous != self && r->n_waiters > 0 &&
      (r->unbooked_owner == 0 || r->unbooked_owner == previous)) {
    const uint64_t blame = r->n_waiters * t2 - r->sum_start;
    r->sum_start = r->n_waiters * t2;
    r->last_release = t2;
    r->unbooked_owner = previous;
    r->unbooked_blame += blame;
    Add(&r->blame_ns, blame);
  }
  r->holder = self;
  a.wait = t2 - t0;
  // Another thread held the lock by the record when this thread got it.
  const bool taken_over = previous != 0 && previous != self;
  bool covered = false;  // some release's blame covered part of this wait
  if (registered) {
    covered = r->last_release > t0;
    const uint64_t start = covered ? r->last_release : t0;
    a.unblamed = t2 - start;
    if (r->n_waiters > 0) {  // 0: the lock was destroyed meanwhile (ForgetWaiters)
      r->n_waiters -= 1;
      r->sum_start -= start;
      __atomic_fetch_sub(&waiters_, 1, __ATOMIC_RELAXED);
    }
  } else {
    a.unblamed = a.wait;
  }
  Unlock(r);
  // Registered: contention is proven by a release during the wait (or one booked here);
  // a slow acquisition of a free lock (lazy binding, a page fault, preemption) is none.
  // Not registered: no blame covers it; a wait only when another thread held the lock.
  a.waited = registered ? covered || taken_over : taken_over && a.wait >= contended_ns;
  if (a.waited) Add(&r->wait_ns, a.wait);
  return a;
}

uint64_t LockTable::ReleaseReported(LockRecord* r, uintptr_t self, ClockFn now) {
  Lock(r);
  uint64_t blame = 0;
  if (r->holder == self) {
    r->holder = 0;
    if (r->n_waiters > 0) {
      const uint64_t t1 = now();
      blame = r->n_waiters * t1 - r->sum_start;
      r->sum_start = r->n_waiters * t1;
      r->last_release = t1;
      Add(&r->blame_ns, blame);
    }
  }
  if (r->unbooked_owner == self) {
    blame += r->unbooked_blame;  // in blame_ns already
    r->unbooked_blame = 0;
    r->unbooked_owner = 0;
  }
  Unlock(r);
  return blame;
}

void LockTable::BeginCondWait(LockRecord* cond) {
  __atomic_fetch_add(&cond->cond_waiters, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&cond_waiters_, 1, __ATOMIC_RELAXED);
}

void LockTable::EndCondWait(LockRecord* cond) {
  __atomic_fetch_sub(&cond->cond_waiters, 1, __ATOMIC_RELAXED);
  __atomic_fetch_sub(&cond_waiters_, 1, __ATOMIC_RELAXED);
}

void LockTable::ForgetWaiters(LockRecord* r) {
  Lock(r);
  __atomic_fetch_sub(&waiters_, r->n_waiters, __ATOMIC_RELAXED);
  r->n_waiters = 0;
  r->sum_start = 0;
  r->last_release = 0;
  r->holder = 0;
  Unlock(r);
}

void LockTable::ResetAfterFork() {
  for (LockRecord* r = first(); r != nullptr; r = r->all_next) {
    r->spin = 0;
    r->n_waiters = 0;
    r->sum_start = 0;
    r->last_release = 0;
    r->cond_waiters = 0;
    r->holder = 0;
    r->unbooked_owner = 0;
    r->unbooked_blame = 0;
  }
  waiters_ = 0;
  cond_waiters_ = 0;
}

}  // namespace cilkprof::agent::locks
