// An OpenMP program of known lock shape (issue 17's lock blame test; the pthread
// equivalent is tests/locks/known_shape.cc). In a parallel region of WAITERS + 1
// threads, thread 0 holds the lock inside hold_long() for a fixed amount of CPU work,
// round after round, while the other threads wait for it in wait_here(). Every wait
// happens while hold_long() holds the lock, so the waiters' lock_wait is under
// wait_here() and its blame under hold_long().
//
//   omp_lock_shape critical|lock|nest WAITERS ROUNDS HOLD_ROUNDS
//
// critical: `#pragma omp critical (shape)`; lock: omp_set_lock/omp_unset_lock on an
// omp_lock_t; nest: omp_set_nest_lock on an omp_nest_lock_t, which the holder takes
// twice (the inner acquisition is the owner's re-acquisition: no wait).
//
// Ordering without sleeps: in each round the holder takes the lock, then lets the
// waiters go (an atomic round number); each waiter announces that it is about to take
// the lock, and the holder starts its critical section's work only when all of them
// have. The window between an announcement and the waiter's call is nanoseconds against
// a critical section of milliseconds. The next round starts when every waiter is
// through the lock.
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum class Mode { kCritical, kLock, kNest };

omp_lock_t g_omp_lock;
omp_nest_lock_t g_omp_nest_lock;
std::atomic<int> g_round{0};
std::atomic<int> g_announced{0};
std::atomic<int> g_done{0};
volatile std::uint64_t g_sink = 0;

__attribute__((noinline)) std::uint64_t Busy(long rounds) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (long i = 0; i < rounds; ++i) x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull + static_cast<std::uint64_t>(i);
  return x;
}

// The critical section's body: open the round, wait for every waiter's announcement,
// then the work the waiters wait through.
void HoldBody(long hold_rounds, int waiters) {
  g_announced.store(0, std::memory_order_relaxed);
  g_done.store(0, std::memory_order_relaxed);
  g_round.fetch_add(1, std::memory_order_release);
  while (g_announced.load(std::memory_order_acquire) < waiters) {
  }
  g_sink = g_sink + Busy(hold_rounds);
}

// The critical section others wait through: the release is here, so the blame is too.
__attribute__((noinline)) void hold_long(Mode mode, long hold_rounds, int waiters) {
  switch (mode) {
    case Mode::kCritical:
#pragma omp critical(shape)
      HoldBody(hold_rounds, waiters);
      break;
    case Mode::kLock:
      omp_set_lock(&g_omp_lock);
      HoldBody(hold_rounds, waiters);
      omp_unset_lock(&g_omp_lock);
      break;
    case Mode::kNest:
      omp_set_nest_lock(&g_omp_nest_lock);
      omp_set_nest_lock(&g_omp_nest_lock);
      HoldBody(hold_rounds, waiters);
      omp_unset_nest_lock(&g_omp_nest_lock);
      omp_unset_nest_lock(&g_omp_nest_lock);
      break;
  }
  g_sink = g_sink + 1;
}

// Where the waiters wait.
__attribute__((noinline)) void wait_here(Mode mode) {
  switch (mode) {
    case Mode::kCritical:
#pragma omp critical(shape)
      g_sink = g_sink + 1;
      break;
    case Mode::kLock:
      omp_set_lock(&g_omp_lock);
      g_sink = g_sink + 1;
      omp_unset_lock(&g_omp_lock);
      break;
    case Mode::kNest:
      omp_set_nest_lock(&g_omp_nest_lock);
      g_sink = g_sink + 1;
      omp_unset_nest_lock(&g_omp_nest_lock);
      break;
  }
  g_sink = g_sink + 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: omp_lock_shape critical|lock|nest WAITERS ROUNDS HOLD_ROUNDS\n");
    return 2;
  }
  Mode mode = Mode::kCritical;
  if (std::strcmp(argv[1], "lock") == 0) mode = Mode::kLock;
  if (std::strcmp(argv[1], "nest") == 0) mode = Mode::kNest;
  const int waiters = std::atoi(argv[2]);
  const int rounds = std::atoi(argv[3]);
  const long hold_rounds = std::atol(argv[4]);
  omp_init_lock(&g_omp_lock);
  omp_init_nest_lock(&g_omp_nest_lock);
#pragma omp parallel num_threads(waiters + 1)
  {
    if (omp_get_num_threads() != waiters + 1) {
      std::fprintf(stderr, "omp_lock_shape: got %d threads, need %d\n", omp_get_num_threads(), waiters + 1);
      std::exit(1);
    }
    const int me = omp_get_thread_num();
    for (int r = 1; r <= rounds; ++r) {
      if (me == 0) {
        hold_long(mode, hold_rounds, waiters);
        while (g_done.load(std::memory_order_acquire) < waiters) {
        }
      } else {
        while (g_round.load(std::memory_order_acquire) < r) {
        }
        g_announced.fetch_add(1, std::memory_order_acq_rel);
        wait_here(mode);
        g_done.fetch_add(1, std::memory_order_acq_rel);
      }
    }
  }
  omp_destroy_nest_lock(&g_omp_nest_lock);
  omp_destroy_lock(&g_omp_lock);
  std::printf("omp_lock_shape: %s, %d waiters, %d rounds\n", argv[1], waiters, rounds);
  return 0;
}
