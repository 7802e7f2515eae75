#include "asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cilk::rt::asymmetric_fence {
namespace {

long Membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

}  // namespace

std::atomic<bool> g_enabled{false};

bool Enable() noexcept {
#ifdef CILK_TSAN
  return false;
#else
  if (g_enabled.load(std::memory_order_relaxed)) return true;
  const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) return false;
  g_enabled.store(true, std::memory_order_seq_cst);
  return true;
#endif
}

void Heavy() noexcept {
#ifndef CILK_TSAN
  if (g_enabled.load(std::memory_order_relaxed)) {
    // Cannot fail once registered; the fence below covers a kernel that says otherwise.
    if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  }
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace cilk::rt::asymmetric_fence
