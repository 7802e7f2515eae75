// A work-stealing deque with the THE protocol of Cilk-5 (Frigo, Leiserson and
// Randall, PLDI 1998): the owner pushes and pops at the tail without a lock unless
// it races with a thief for the last entry; thieves take the head under a lock.
//
// Contract:
//   - Push and Pop are called only by the owner thread (the worker whose deque it is).
//   - Steal may be called by any thread. It runs `on_steal(entry)` while still
//     holding the lock, so the owner's failing Pop (which takes the lock) observes
//     everything on_steal did. The runtime uses that to count a stolen
//     continuation in its scope before the child can notice the theft.
//   - Entries are pointers; the deque never dereferences them.
//   - Capacity grows on demand (the owner compacts or doubles the array under the
//     lock); old arrays are kept until destruction because the owner's lock-free
//     Pop never reads them again but a Steal is serialised by the lock anyway.
//
// Memory order: THE needs a store-load fence on both sides (owner's pop: tail then
// head; thief: head then tail). The owner's is asymmetric_fence::Light() (a compiler
// barrier once the runtime enabled membarrier), the thief's asymmetric_fence::Heavy()
// (asymmetric_fence.hpp). Under ThreadSanitizer, which models neither standalone
// fences nor membarrier, sequentially consistent stores and loads take their place.
#ifndef CILK_SRC_THE_DEQUE_HPP_
#define CILK_SRC_THE_DEQUE_HPP_

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "asymmetric_fence.hpp"
#include "spin_lock.hpp"

namespace cilk::rt {

template <class T>
class TheDeque {
 public:
  explicit TheDeque(std::size_t initial_capacity = 256)
      : capacity_(initial_capacity < 2 ? 2 : initial_capacity) {
    arrays_.emplace_back(new std::atomic<T*>[capacity_]);
    slots_ = arrays_.back().get();
  }
  TheDeque(const TheDeque&) = delete;
  TheDeque& operator=(const TheDeque&) = delete;

  // Owner only.
  void Push(T* entry) {
    long tail = tail_.load(std::memory_order_relaxed);
    if (tail == static_cast<long>(capacity_)) tail = MakeRoom();
    slots_[tail].store(entry, std::memory_order_relaxed);
    tail_.store(tail + 1, std::memory_order_release);
  }

  // Owner only. The newest entry, or nullptr if the deque is empty (everything
  // was stolen).
  T* Pop() {
    const long tail = tail_.load(std::memory_order_relaxed) - 1;
#ifdef CILK_TSAN
    tail_.store(tail, std::memory_order_seq_cst);
    const long head = head_.load(std::memory_order_seq_cst);
#else
    tail_.store(tail, std::memory_order_relaxed);
    asymmetric_fence::Light();
    const long head = head_.load(std::memory_order_relaxed);
#endif
    if (head > tail) {
      // Empty, or a thief may be taking the same (last) entry: settle it under the lock.
      tail_.store(tail + 1, std::memory_order_relaxed);
      std::lock_guard<SpinLock> guard(lock_);
      tail_.store(tail, std::memory_order_seq_cst);
      if (head_.load(std::memory_order_seq_cst) > tail) {
        tail_.store(tail + 1, std::memory_order_relaxed);
        return nullptr;
      }
    }
    return slots_[tail].load(std::memory_order_relaxed);
  }

  // Any thread. The oldest entry, or nullptr. on_steal(entry) runs under the lock.
  template <class OnSteal>
  T* Steal(OnSteal&& on_steal) {
    if (!MaybeNonEmpty()) return nullptr;
    std::lock_guard<SpinLock> guard(lock_);
    const long head = head_.load(std::memory_order_relaxed);
#ifdef CILK_TSAN
    head_.store(head + 1, std::memory_order_seq_cst);
    const long tail = tail_.load(std::memory_order_seq_cst);
#else
    head_.store(head + 1, std::memory_order_relaxed);
    asymmetric_fence::Heavy();
    const long tail = tail_.load(std::memory_order_relaxed);
#endif
    if (head + 1 > tail) {
      head_.store(head, std::memory_order_relaxed);
      return nullptr;
    }
    T* entry = slots_[head].load(std::memory_order_relaxed);
    on_steal(entry);
    return entry;
  }
  T* Steal() {
    return Steal([](T*) {});
  }

  // Owner only. Removes every entry, calling take(entry) oldest first, under the
  // lock (no thief can take one meanwhile).
  template <class Take>
  void DrainOldestFirst(Take&& take) {
    std::lock_guard<SpinLock> guard(lock_);
    const long head = head_.load(std::memory_order_relaxed);
    const long tail = tail_.load(std::memory_order_relaxed);
    for (long i = head; i < tail; ++i) take(slots_[i].load(std::memory_order_relaxed));
    head_.store(0, std::memory_order_seq_cst);
    tail_.store(0, std::memory_order_seq_cst);
  }

  // Any thread; a hint (exact only when no one else touches the deque).
  bool MaybeNonEmpty() const {
    return head_.load(std::memory_order_seq_cst) < tail_.load(std::memory_order_seq_cst);
  }

 private:
  // Owner, with tail == capacity: slide the live entries to the front, or double.
  long MakeRoom() {
    std::lock_guard<SpinLock> guard(lock_);
    const long head = head_.load(std::memory_order_relaxed);
    const long tail = tail_.load(std::memory_order_relaxed);
    const std::size_t live = static_cast<std::size_t>(tail - head);
    std::atomic<T*>* target = slots_;
    if (live * 2 > capacity_) {
      capacity_ *= 2;
      arrays_.emplace_back(new std::atomic<T*>[capacity_]);
      target = arrays_.back().get();
    }
    for (std::size_t i = 0; i < live; ++i) {
      target[i].store(slots_[head + static_cast<long>(i)].load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    slots_ = target;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(static_cast<long>(live), std::memory_order_relaxed);
    return static_cast<long>(live);
  }

  alignas(64) std::atomic<long> tail_{0};
  alignas(64) std::atomic<long> head_{0};
  SpinLock lock_;
  std::atomic<T*>* slots_;   // written by the owner under the lock; read by thieves under it
  std::size_t capacity_;
  std::vector<std::unique_ptr<std::atomic<T*>[]>> arrays_;
};

}  // namespace cilk::rt

#endif  // CILK_SRC_THE_DEQUE_HPP_
