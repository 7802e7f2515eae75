// The sample a thread takes itself as it ends, when one had come due and was never
// delivered (issue 12, row 8).
//
// With a perf event, a sample that comes due while the thread runs in the kernel is not
// signalled (the event excludes kernel mode) but carried, with its overrun, to the next
// overflow in user mode. A thread that ends in the kernel (the last system calls of its
// start routine, its exit) never reaches that overflow, and the sample was lost: about
// one thread in fifty of 2,000 threads of 75 us each, each such sample weighing a
// whole period, 15% of their time. So as it unregisters, back in user mode after its
// start routine (or in pthread_exit), a thread whose sample is due takes it there,
// where the kernel would have delivered it next: at the same weight (the mean and the
// overrun), on its call path at that point (the agent's own frames elided, so the
// thread's outermost frames, or the caller of pthread_exit).
//
// The same holds for a sample due by the thread's schedule before the event, armed at
// the floor, overflows: a first interval drawn below the floor (sample_interval.h).
//
// Not when the sampling signal is blocked on the thread: that time is reported as
// unsampled with the blocked signal named (unsampled.h), as the program asked not to
// be interrupted.
#pragma once

#include <cstdint>

#include "thread_record.h"

namespace cilkprof::agent {

// On the ending thread itself, its record's in_handler set (no signal sample can run).
void TakeDueSampleAtThreadEnd(ThreadRecord* self, uint64_t weight);

}  // namespace cilkprof::agent
