// A test-and-test-and-set spin lock for very short critical sections (a deque's
// steal path). Never held across anything that can block.
#ifndef CILK_SRC_SPIN_LOCK_HPP_
#define CILK_SRC_SPIN_LOCK_HPP_

#include <atomic>

namespace cilk::rt {

inline void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class SpinLock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) CpuRelax();
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace cilk::rt

#endif  // CILK_SRC_SPIN_LOCK_HPP_
