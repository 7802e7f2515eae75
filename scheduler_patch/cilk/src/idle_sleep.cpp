#include "idle_sleep.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace cilk::rt {
namespace {

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const struct timespec* timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

void IdleSleep::WakeOne() {
  if (wake_pending_.load(std::memory_order_relaxed) || wake_pending_.exchange(true, std::memory_order_acq_rel)) {
    return;  // a wake-up is on its way already
  }
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (Futex(&epoch_, FUTEX_WAKE_PRIVATE, 1, nullptr) <= 0) {
    wake_pending_.store(false, std::memory_order_release);  // nobody was asleep yet
  }
}

void IdleSleep::WakeAll() {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  Futex(&epoch_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
}

void IdleSleep::Sleep(uint32_t seen_epoch, bool timed) {
  struct timespec timeout = {0, kTimedSleepNanoseconds};
  Futex(&epoch_, FUTEX_WAIT_PRIVATE, seen_epoch, timed ? &timeout : nullptr);
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  wake_pending_.store(false, std::memory_order_release);
}

}  // namespace cilk::rt
