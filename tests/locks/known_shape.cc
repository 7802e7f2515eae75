// A program of known lock shape (issue 14's test): one thread holds lock L inside
// hold_long() for a fixed amount of CPU work, round after round, while WAITERS other
// threads wait for it in wait_here(). Every wait happens while hold_long() holds L, so
// the waiters' lock_wait is under wait_here() and its blame under hold_long().
//
//   known_shape WAITERS ROUNDS HOLD_ROUNDS
//
// Ordering without sleeps: in each round the holder takes L, then releases the waiters
// through a second mutex-free gate (an atomic round number); each waiter announces that
// it is about to lock L, and the holder starts its critical section's work only when all
// of them have. The window between a waiter's announcement and its sleep in the kernel
// is microseconds against a critical section of milliseconds. With WAITERS = 0 the
// holder runs alone: no wait, no blame.
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<int> g_round{0};      // the round the waiters may start
std::atomic<int> g_announced{0};  // waiters about to lock L in this round
std::atomic<int> g_done{0};       // waiters through L in this round
volatile std::uint64_t g_sink = 0;

__attribute__((noinline)) std::uint64_t Busy(long rounds) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (long i = 0; i < rounds; ++i) x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull + static_cast<std::uint64_t>(i);
  return x;
}

// The critical section others wait through: the unlock is here, so the blame is too.
// Built twice: with KNOWN_SHAPE_TAIL_CALL the unlock is hold_long's last call, which
// GCC makes a jump (hold_long's frame is gone when the unlock runs: the agent must put
// it back, locks/tail_call.h); without, a statement follows it.
__attribute__((noinline)) void hold_long(long hold_rounds, int waiters) {
  pthread_mutex_lock(&g_lock);
  g_announced.store(0, std::memory_order_relaxed);
  g_done.store(0, std::memory_order_relaxed);
  g_round.fetch_add(1, std::memory_order_release);
  while (g_announced.load(std::memory_order_acquire) < waiters) {
  }
  g_sink = g_sink + Busy(hold_rounds);
  pthread_mutex_unlock(&g_lock);
#ifndef KNOWN_SHAPE_TAIL_CALL
  g_sink = g_sink + 1;
#endif
}

// Where the waiters wait.
__attribute__((noinline)) void wait_here() {
  pthread_mutex_lock(&g_lock);
  g_sink = g_sink + 1;
  pthread_mutex_unlock(&g_lock);
  g_sink = g_sink + 1;
}

void Waiter(int rounds) {
  for (int r = 1; r <= rounds; ++r) {
    while (g_round.load(std::memory_order_acquire) < r) std::this_thread::yield();
    g_announced.fetch_add(1, std::memory_order_acq_rel);
    wait_here();
    g_done.fetch_add(1, std::memory_order_acq_rel);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: known_shape WAITERS ROUNDS HOLD_ROUNDS\n");
    return 2;
  }
  const int waiters = std::atoi(argv[1]);
  const int rounds = std::atoi(argv[2]);
  const long hold_rounds = std::atol(argv[3]);
  std::vector<std::thread> threads;
  for (int i = 0; i < waiters; ++i) threads.emplace_back(Waiter, rounds);
  for (int r = 1; r <= rounds; ++r) {
    hold_long(hold_rounds, waiters);
    // The next round starts when every waiter is through L (they re-announce only then).
    while (g_done.load(std::memory_order_acquire) < waiters) std::this_thread::yield();
  }
  for (auto& t : threads) t.join();
  std::printf("known_shape: %d waiters, %d rounds\n", waiters, rounds);
  return 0;
}
