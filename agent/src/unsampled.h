// Time the samples did not cover (issue 11; docs/AGENT.md, "Unsampled time").
//
// With a timer, a thread's samples cover its sampling clock (sample_source.h) from its
// arming up to its last sample exactly (each sample weighs the time since the previous
// one). What comes after the last sample, the tail, is unsampled: about a period
// normally, but all of the thread's time when the sampling signal stays blocked (a
// direct rt_sigprocmask system call, a mask the interposition could not change) or
// when the thread lives less than one period.
//
// With a perf event (Poisson intervals, each sample weighing the mean interval plus
// any overrun: sample_interval.h) the samples cover the thread's whole time in
// expectation, tail included, from its first instant (its first interval comes from
// the intervals' equilibrium distribution), however short it lives. What they miss is
// a sample that came due and was never taken: the signal blocked, or the thread ended
// just then; that sample's weight (the mean, plus the time since it came due) is the
// thread's unsampled time. (Issue 12, row 8: the tail of every thread used to be
// counted as missing, which double-counted what the samples stood for.)
//
// When a thread ends, and at the final flush for the threads still running, the agent
// measures that time and whether the signal is blocked, and sends both once
// (ThreadCounters.unsampled_ns and signal_blocked).
//
// Threads the agent never registered (started inside the C library, e.g. for
// SIGEV_THREAD timers, or with a raw clone system call) are measured by difference:
// the process's CPU time minus that of the registered threads and of the agent's
// flusher (Goodbye.unseen_thread_cpu_ns). The few microseconds a registered thread
// runs after it unregisters count there too; the aggregator only warns about a
// difference well above that.
//
// Not signal-safe. Each function takes the registry lock itself unless it says
// otherwise.
#pragma once

#include <cstdint>

#include "thread_record.h"

namespace cilkprof::agent {

// On the only thread of the process image (start-up, a fork child): the process CPU
// time so far that belongs to no thread of this image (earlier images' threads).
void NoteCpuBase();

// What the calling thread measures about itself as it unregisters.
struct ThreadEnd {
  uint64_t clock_ns = 0;  // its sampling clock now (sample_source.h)
  uint64_t cpu_ns = 0;    // the thread's CPU time now
  bool signal_blocked = false;
  // A sample had come due and the thread took it itself (TakeDueSampleAtThreadEnd).
  bool due_sample_taken = false;
};
ThreadEnd MeasureOwnEnd(const ThreadRecord* self);
// With a perf event: the weight of a sample that came due by `now` (the thread's
// event count) and was not taken, 0 if none (sample_interval.h): due by the thread's
// schedule, which may run ahead of the armed event by the record's lag. Any thread.
uint64_t DueSampleWeight(const ThreadRecord* t, uint64_t now);
// Records it (registry lock held): the tail goes to t's counters unless the final
// flush measured t already.
void RecordOwnEnd(ThreadRecord* t, const ThreadEnd& end);

// The final flush (flush_mu held, before FlushLocked): measures every thread still
// running. After a failed exec, ReopenLiveThreads lets them be measured again later
// (from where the last measurement stopped).
void MeasureLiveThreadsEnd();
void ReopenLiveThreads();

// The flusher, just before its thread ends: its CPU time is the agent's, not unseen.
void NoteFlusherCpu();

// The final flush, after MeasureLiveThreadsEnd: CPU time of unregistered threads since
// the previous call (or since start-up).
uint64_t TakeUnseenThreadCpuNs();

}  // namespace cilkprof::agent
