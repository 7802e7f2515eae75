// Recording one sample with blame (issue 4): reads the runtime's state word and
// counters, unwinds the logical path, and charges work, idleness or overhead.
//
//   NOT_A_WORKER (or no runtime)  work += weight at the physical path (with runtime and
//                                 agent frames elided), as a physical profiler would;
//   WORKING                       work += weight at the logical path;
//   OVERHEAD                      overhead += weight at the spawn or sync site that
//                                 caused the scheduling work (unwinder/logical.h says
//                                 how it is found); at the root when there is none;
//   IDLE                          nothing in the tree: idle_samples and idle_ns count it.
//   waiting for a lock          lock_wait += weight at the logical path of the lock call
//   (ThreadRecord::waiting_lock, + a FRAME_LOCK leaf for the lock (issue 14, locks/), and
//   any state)                  nothing else: a thread blocked on a lock is neither
//                               working, idle nor doing scheduling work;
//   in the work/span tool's      instrumentation += weight at the logical path (found
//   code, any state              as for the state), and nothing else: no work, overhead
//   (instrumentation.h)          or idleness, so that the sampled profile describes the
//                                user's program, not the instrumented one. In the tool:
//                                the thread's depth (hooks, API, attach), the worker's
//                                tool_path mark (the runtime's tool-only scope paths),
//                                or an interrupted pc in the tool's code (InToolCode).
// On WORKING and OVERHEAD samples, idleness += weight x (workers - working) / working,
// both counters read from the runtime at the sample (they are updated with relaxed
// stores by other threads, so each read may be slightly stale: the summary reports
// the resulting skew between idleness handed out and idle time measured).
//
// Signal safety: both functions are async-signal-safe and run on the thread that owns
// `t`, with t->in_handler set by the caller.
#pragma once

#include <ucontext.h>

#include <cstdint>

#include "thread_record.h"

namespace cilkprof::agent {

// A sampling signal's sample of weight `weight` (ns of the sampling clock).
// `synchronous`: `context` comes from getcontext() in the agent (a sample that came due
// and is taken by the thread itself: thread_end_sample.h), not from a signal.
void TakeSample(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode, uint64_t weight,
                bool synchronous = false);

// A cilkprof_probe() sample: `context` comes from getcontext() in the probe itself, so
// frame 0 is the probe (elided). Adds probe += 1 at the logical path, nothing else.
void TakeProbe(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode);

// A lock clock's charge (locks/lock_clock.h): `context` comes from getcontext() in the
// agent, inside an interposed lock function the program called; adds `amount` to
// `metric` (kMetricLockWait or kMetricLockBlame) at the logical path + a FRAME_LOCK leaf
// for `lock`. Nothing else (no samples, no counters).
void ChargeLock(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode, uintptr_t lock,
                MetricId metric, uint64_t amount);

}  // namespace cilkprof::agent
