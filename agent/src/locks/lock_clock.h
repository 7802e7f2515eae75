// The per-thread virtual clocks of lock blame (issue 14; docs/AGENT.md "Lock blame"):
// a thread's lock-wait clock advances by the waits measured at its contended lock
// calls, its lock-blame clock by the blame its releases hand out. Each clock is
// sampled like the perf-event sampler samples CPU time: Poisson intervals with the
// sampling period as mean (sample_interval.h). Every crossing of a sample point is one
// charge of `period` to the calling context, so a context receives in expectation the
// time its calls added to the clock, and the cost (one unwind per crossing) is bounded
// like sampling's, whatever the number of contended calls.
//
// Pure arithmetic, owner-thread only, async-signal-safe.
#pragma once

#include <cstdint>

namespace cilkprof::agent::locks {

struct LockClock {
  uint64_t due_ns = 0;  // clock time left to the next sample point; 0: not started
};

// Advances `clock` by `amount_ns` and returns the sample points crossed. `rng` is the
// thread's generator (SeedSampleIntervals); `mean_ns` the sampling period.
uint64_t AdvanceLockClock(LockClock* clock, uint64_t amount_ns, uint64_t mean_ns, uint64_t* rng);

}  // namespace cilkprof::agent::locks
