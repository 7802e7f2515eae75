// A store-load fence split unevenly between a frequent side and a rare side.
//
// The THE deque needs a store-load fence on both sides of a Dekker-style race: the
// owner's pop (store tail, then load head; once per spawn) and a thief's steal
// (store head, then load tail; once per steal). A full fence costs the pop as much
// as the rest of a spawn's bookkeeping. With Linux's membarrier(2)
// MEMBARRIER_CMD_PRIVATE_EXPEDITED the frequent side can make do with a compiler
// barrier: the rare side's HeavyFence() makes every running thread of the process
// execute a full memory barrier, so for any pop racing the steal either the thief
// sees the owner's tail store or the owner sees the thief's head store (a thread
// that is not running passed a barrier in the context switch). The heavy side then
// costs a system call and inter-processor interrupts, which only steals pay.
//
// Enable() switches the scheme on (once, at runtime start-up); until then, and if
// the kernel lacks the command, or under ThreadSanitizer (which does not model
// membarrier), both sides are full fences.
#ifndef CILK_SRC_ASYMMETRIC_FENCE_HPP_
#define CILK_SRC_ASYMMETRIC_FENCE_HPP_

#include <atomic>

#include "sanitizer_fibers.hpp"  // CILK_TSAN

namespace cilk::rt::asymmetric_fence {

// True once membarrier's private expedited command is registered for the process.
extern std::atomic<bool> g_enabled;

// Registers the process for membarrier's private expedited command. Returns whether
// the light/heavy scheme is now on. Call before any thread relies on the light side
// (the owner of a deque must not have a pop in flight while it changes).
bool Enable() noexcept;

// The frequent side: a compiler barrier when enabled, else a full fence.
inline void Light() noexcept {
#ifndef CILK_TSAN
  if (__builtin_expect(g_enabled.load(std::memory_order_relaxed), 1)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return;
  }
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// The rare side: a full barrier on every running thread of the process when
// enabled, else a full fence on this thread.
void Heavy() noexcept;

}  // namespace cilk::rt::asymmetric_fence

#endif  // CILK_SRC_ASYMMETRIC_FENCE_HPP_
