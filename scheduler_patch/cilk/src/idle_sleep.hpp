// Idle workers back off to sleeping on a futex, so an idle process burns no CPU.
//
// Protocol. A worker about to sleep calls PrepareSleep (counts itself as a sleeper
// and reads the epoch), re-checks every source of work, then either CancelSleep or
// Sleep(epoch). Publishers of work call NotifyWork after publishing:
//   - Strict (sequentially consistent read-modify-write): no wake-up is ever lost.
//     Used for rare or essential events: the root strand's hand-off, forced
//     steals, shutdown.
//   - Relaxed (one plain load of the sleeper count): used on every spawn, where a
//     store-load fence would cost more than the spawn's other bookkeeping. It can
//     miss a sleeper that registered within the few nanoseconds the new entry sat
//     in the store buffer; such a sleeper wakes by itself after kTimedSleep while
//     any computation is in progress, and sleeps without a timeout otherwise.
// Wake-ups are throttled: at most one single-waiter futex wake is in flight.
#ifndef CILK_SRC_IDLE_SLEEP_HPP_
#define CILK_SRC_IDLE_SLEEP_HPP_

#include <atomic>
#include <cstdint>

namespace cilk::rt {

class IdleSleep {
 public:
  static constexpr long kTimedSleepNanoseconds = 5'000'000;  // 5 ms

  void NotifyWorkRelaxed() {
    if (sleepers_.load(std::memory_order_relaxed) > 0) WakeOne();
  }
  void NotifyWorkStrict() {
    if (sleepers_.fetch_add(0, std::memory_order_seq_cst) > 0) WakeOne();
  }
  void WakeAll();

  uint32_t PrepareSleep() {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    return epoch_.load(std::memory_order_seq_cst);
  }
  void CancelSleep() { sleepers_.fetch_sub(1, std::memory_order_seq_cst); }
  // Sleeps until woken, or for at most kTimedSleepNanoseconds when `timed`.
  void Sleep(uint32_t seen_epoch, bool timed);

  int sleepers() const { return sleepers_.load(std::memory_order_relaxed); }

 private:
  void WakeOne();

  alignas(64) std::atomic<uint32_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> wake_pending_{false};
};

}  // namespace cilk::rt

#endif  // CILK_SRC_IDLE_SLEEP_HPP_
