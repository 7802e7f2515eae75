// Poisson sampling (issue 11, rough edge 8): how long a thread runs from the end of
// one sample to its next sample, and what each sample weighs.
//
// A fixed period makes the time to the next sample depend on when the last one was
// taken, and programs react to being sampled: a thread that stops for a sample (or is
// preempted right after one, which the kernel does often) loses work to the other
// threads, and the code it runs next (a work-stealing program's serial part after a
// parallel phase, say) then always starts just after a sample and is never sampled
// before it ends. perf's cpu-clock and the old fixed period both showed a oneTBB
// program's serial function at 60% of its measured time (docs/PERFORMANCE.md, "Sampled
// shares against perf"). Drawing each interval afresh from an exponential distribution
// makes the next sample as likely at any moment as at any other, whatever happened
// before: every piece of code is sampled in proportion to its CPU time, including code
// that runs right after a sample.
//
// The intervals are shifted exponentials: `MinSampleInterval(mean)` (50 us, or mean/100
// if larger: shorter intervals set from the handler could stop the event, see
// sample_interval.cc) plus an exponential draw, so that their mean is exactly `mean`.
// Code always run within that floor after a sample is still missed: a function run
// for half a period after every sample is sampled at about 90% of its time. A sample weighs `mean` (each one stands for a mean
// interval of CPU time, as in any Poisson sampler), plus the time by which the interval
// was overrun: overflows the kernel dropped while the thread ran in kernel mode, or
// samples the handler skipped, so the totals still cover the thread's time. The weight
// does not depend on how long ago the previous sample was: that time is exactly what
// the program's reaction to sampling correlates with.
//
// Pure arithmetic, async-signal-safe (the handler draws the next interval).
#pragma once

#include <cstdint>

namespace cilkprof::agent {

// A per-thread generator state, never 0.
uint64_t SeedSampleIntervals(uint64_t tid, uint64_t salt);

// The generator's next 64 random bits (xorshift64*); advances `state`.
uint64_t NextRandom(uint64_t* state);

uint64_t MinSampleInterval(uint64_t mean_ns);

// The next interval, in ns of the thread's clock; advances `state`.
uint64_t NextSampleInterval(uint64_t* state, uint64_t mean_ns);

// The first interval of a thread, or after its sampling was stopped and restarted: not
// a whole interval (the thread did not start just after a sample) but the time to the
// next sample of intervals that have been running all along, drawn from their
// equilibrium distribution: with probability floor/mean uniform in [0, floor), else
// floor plus the exponential part. The samples of a thread are then a stationary
// renewal process from its first instant, and a thread of any length T gets T/mean
// samples in expectation, each weighing the mean: threads shorter than the floor or a
// period are charged their time, in expectation, instead of nothing (issue 12, row 8;
// 2,000 threads of 75 us each were charged a third of their time).
//
// The draw is when the sample is due, not the period the event is armed with: a draw
// below the floor is armed at the floor (ArmedFirstInterval), since a period that short
// can stop the event for milliseconds (sample_interval.cc). Every later sample then
// trails the thread's schedule by that lag, and a thread that ends with a sample due
// by the schedule but not yet by the event takes it itself (thread_end_sample.h): the
// count stays T/mean in expectation, and no interval below the floor is ever armed.
uint64_t FirstSampleInterval(uint64_t* state, uint64_t mean_ns);
uint64_t ArmedFirstInterval(uint64_t due_ns, uint64_t mean_ns);

// The weight of a sample taken `elapsed_ns` after its interval of `interval_ns` began.
uint64_t PoissonSampleWeight(uint64_t mean_ns, uint64_t interval_ns, uint64_t elapsed_ns);

}  // namespace cilkprof::agent
