// The contended paths of the interposed lock functions (issue 14; lock_calls.cc has
// the fast paths, docs/AGENT.md "Lock blame" the whole design): registering a waiter,
// marking the thread as waiting, the thread counters and the lock's totals, the blame
// handed out at releases, condition waits, and charging the per-thread lock clocks
// (lock_clock.h) to the calling context with a synchronous unwind.
//
// Calls made by the agent's own code or libunwind's, by the task-parallel runtime's
// library (its own scheduling locks; any module the unwinder elides), calls made while
// the thread is in the sampling handler (in_handler) or already inside this
// bookkeeping (a signal handler that locks while the interrupted code was here), and
// calls from threads the agent does not profile are passed straight to the real
// functions.
//
// Everything here is async-signal-safe (a signal handler may lock): no malloc, no lock
// but a record's own spinlock, held for a few instructions and a clock read, by a
// thread that never takes it again while holding it (the depth above).
// This file is built with frame pointers: the frames between the program's lock call
// and the unwind must be walkable by the frame-pointer unwinder.
#pragma once

#include <cstdint>

#include "locks/lock_table.h"
#include "thread_record.h"

namespace cilkprof::agent::locks {

// Blocks in `acquire(lock, args)` (the real blocking call) as a registered waiter of
// `lock`. Returns what `acquire` returned.
using AcquireFn = int (*)(void* lock, const void* args);
int ContendedAcquire(void* lock, LockKind kind, const void* caller, AcquireFn acquire, const void* args);

// A release while some thread waits for some lock: hands out the blame of `lock`'s
// waiters, then calls `release(lock)` (the real unlock). Returns what it returned.
using ReleaseFn = int (*)(void* lock);
int ContendedRelease(void* lock, const void* caller, ReleaseFn release);

// A condition wait: the implicit release of `mutex` at its start, then `wait(cond,
// mutex, args)`, then the mutex re-acquisition's wait (from the signal that woke it).
using CondWaitCallFn = int (*)(void* cond, void* mutex, const void* args);
int AccountedCondWait(void* cond, void* mutex, const void* caller, CondWaitCallFn wait, const void* args);

// The begin/end form, for a runtime that reports its lock calls through callbacks
// rather than being interposed (OMPT's mutex callbacks, ompt/ompt_locks.cc): the
// pieces ContendedAcquire and ContendedRelease are made of.
//
// The calling thread's record when a lock call made from `caller` (the program's
// return address) is to be accounted, else nullptr (the rules at the top).
ThreadRecord* AccountedThread(const void* caller);
// Inside the lock bookkeeping for its lifetime (lock calls made meanwhile, by a signal
// handler or the unwinder, go straight to the real functions); keeps errno.
class BookkeepingScope {
 public:
  BookkeepingScope();
  ~BookkeepingScope();
  BookkeepingScope(const BookkeepingScope&) = delete;
  BookkeepingScope& operator=(const BookkeepingScope&) = delete;

 private:
  int saved_errno_;
};
// The thread waits for `lock` since `since` (ThreadRecord::waiting_lock: its samples are
// lock_wait), and no longer.
void MarkWaiting(ThreadRecord* t, uintptr_t lock, uint64_t since);
void UnmarkWaiting(ThreadRecord* t);
// A measured wait of `r`'s lock: the thread's counters and the wait clock; `acquired`:
// it ended with the lock (a contended acquisition).
void ChargeWait(ThreadRecord* t, LockRecord* r, uint64_t wait, uint64_t unblamed, bool acquired);
// Blame handed out by the thread's release of `lock`: its counter and the blame clock,
// charged at the calling context.
void ChargeBlame(ThreadRecord* t, uintptr_t lock, uint64_t blame);

// pthread_cond_signal/broadcast while some thread is in a condition wait.
void NoteCondSignal(void* cond);

// pthread_mutex_destroy of a lock that has a record.
void ForgetDestroyedLock(void* lock);

// An acquisition by the calling thread (the fast paths): a thread-local count.
inline void CountAcquisitionOf(uint64_t* counter) {
  // One instruction: a signal handler on this thread that locks cannot fall between a
  // load and a store and lose its count.
  asm volatile("addq $1, %0" : "+m"(*counter));
}

// Per-lock acquisitions without touching shared state on the fast path: about one
// uncontended acquisition in kAcquisitionSampleMean (at random: intervals drawn
// uniformly from 1 to 2 x mean - 1, so that no regular pattern of locks aliases with
// them) looks its lock up, and the lock's record, when it has one (it was contended),
// gets the interval's length. An unbiased estimate per lock; acquisitions before a
// lock's first contention have no record to go to. The fast path pays a thread-local
// decrement; the sampled one a lock-free lookup. Not for the sampling handler.
inline constexpr uint32_t kAcquisitionSampleMean = 32;
void SampleAcquisition(ThreadRecord* t, const void* lock);
inline void CountUncontendedAcquisition(ThreadRecord* t, const void* lock) {
  CountAcquisitionOf(&t->counters.lock_acquisitions);
  if (__builtin_expect(--t->acquisition_countdown <= 0, 0)) SampleAcquisition(t, lock);
}

}  // namespace cilkprof::agent::locks
