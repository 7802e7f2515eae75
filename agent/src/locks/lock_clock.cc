#include "locks/lock_clock.h"

#include "sample_interval.h"

namespace cilkprof::agent::locks {

uint64_t AdvanceLockClock(LockClock* clock, uint64_t amount_ns, uint64_t mean_ns, uint64_t* rng) {
  if (mean_ns == 0 || amount_ns == 0) return 0;
  // A clock that starts is in the middle of intervals running all along (the
  // equilibrium draw, as a thread's first sampling interval).
  if (clock->due_ns == 0) clock->due_ns = FirstSampleInterval(rng, mean_ns);
  uint64_t crossings = 0;
  while (amount_ns >= clock->due_ns) {
    amount_ns -= clock->due_ns;
    ++crossings;
    clock->due_ns = NextSampleInterval(rng, mean_ns);
  }
  clock->due_ns -= amount_ns;
  if (clock->due_ns == 0) clock->due_ns = 1;
  return crossings;
}

}  // namespace cilkprof::agent::locks
