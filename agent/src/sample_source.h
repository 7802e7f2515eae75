// Per-thread sample sources: what makes the kernel interrupt a thread with the
// profiling signal, and the clock its samples are weighed by.
//
//   cpu clock: a perf_event_open software task-clock counter of the thread, O_ASYNC,
//              F_SETSIG and F_SETOWN_EX(F_OWNER_TID), so each overflow signals that very
//              thread. Its intervals are drawn afresh at every sample (Poisson sampling,
//              sample_interval.h) and the handler reads the counter itself, with read(),
//              as its clock. When perf events are denied: timer_create on the thread's
//              CPU-time clock with SIGEV_THREAD_ID, at a fixed period.
//   wall clock: timer_create(CLOCK_MONOTONIC) with SIGEV_THREAD_ID, at a fixed period:
//              idle and blocked threads are sampled too.
//
// Why the counter and not clock_gettime(CLOCK_THREAD_CPUTIME_ID): reading a running
// thread's CPU clock makes the scheduler account its runtime on the spot, and since
// Linux 6.6 (EEVDF) that is where it decides that the thread's slice is over. A thread
// that shares its CPU was then preempted inside the sample handler (256 of ~400
// preemptions in bench/shares' measurement, 1 with read()), 40% more often than
// without the agent, and handed its work to other threads at every sample.
//
// Arm/Disarm/Retarget may run on any thread of the process (they address the thread by
// tid, by its CPU clock id and by its event); they keep the event's descriptor open so
// that the handler's read() and ioctl() can never reach a reused descriptor. Only
// ReleaseThreadSource closes it: on the thread itself as it ends (no handler can run
// then), or on a record whose thread is gone. Not signal-safe except where noted.
// Callers hold the registry lock.
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "thread_record.h"

namespace cilkprof::agent {

struct SamplerSettings {
  ClockKind clock = ClockKind::kCpu;
  // False with CILKPROF_SAMPLE_SOURCE=none: no thread is ever armed (no perf event, no
  // timer), so no sample is taken but cilkprof_probe's, and no signal is sent.
  bool sampled = true;
  bool use_perf = true;  // cpu clock only
  uint64_t period_ns = 1000000;  // the mean interval with a perf event, else the period
  int signo = 0;
};

enum SourceKind : int { kNoSource = 0, kPerfSource = 1, kTimerSource = 2 };

// Tries a perf_event task-clock counter on the calling thread; false with the reason.
bool PerfEventsAvailable(std::string* why);

// On the registering thread, before it can be armed: the clock its samples are weighed
// by until a perf event replaces it, and last_clock_ns read from it.
void InitSampleClock(ThreadRecord* thread, const SamplerSettings& settings);

// Starts sampling the thread: its perf event (opened, or re-enabled after a disarm with
// a fresh interval) or a timer. The kind of source is chosen once per thread. Without
// sampling (settings.sampled false) it arms nothing and succeeds.
bool ArmThread(ThreadRecord* thread, const SamplerSettings& settings, std::string* error);
// Stops sampling the thread: its perf event is disabled (the descriptor stays open),
// its timer deleted.
void DisarmThread(ThreadRecord* thread);
// Disarms and closes: on the thread itself as it unregisters, or when it has ended.
void ReleaseThreadSource(ThreadRecord* thread);
// In a fork child: drops the parent's sources without touching them (the perf fd is
// shared with the parent; a timer is not inherited at all).
void ForgetInheritedSource(ThreadRecord* thread);
// Moves an armed thread to `settings.signo`.
bool RetargetThread(ThreadRecord* thread, const SamplerSettings& settings, std::string* error);

// Async-signal-safe, from any thread (no lock needed on the thread itself): the clock
// the thread's samples are weighed by, in ns. Its perf event's count (time on CPU since
// the event was opened, frozen while it is disabled), or sample_clock.
bool ReadSampleClock(const ThreadRecord* thread, uint64_t* ns);

// Async-signal-safe, the thread's own handler only, with a perf event. On entry: the
// weight of the sample taken at clock `now` (sample_interval.h), and a hold on the
// event so that it cannot overflow while the handler runs. Left running, a short
// interval kept interrupting the handler (an interrupt costs tens of microseconds on a
// VM: handlers took milliseconds), and the event sometimes stopped for milliseconds or
// seconds (bench/shares/short_interval.c: 1.5% of the samples without the hold, none
// with it at 30 us and more). At the end of the handler: the next interval drawn and
// started.
bool UsesPoissonIntervals(const ThreadRecord* thread);
uint64_t WeighPoissonSample(const ThreadRecord* thread, uint64_t mean_ns, uint64_t now);
void HoldSamplesInHandler(ThreadRecord* thread, uint64_t mean_ns);
void ScheduleNextSample(ThreadRecord* thread, uint64_t mean_ns);

// Async-signal-safe: whether the signal `info` describes was sent by a sample source
// of the agent to `thread` (the calling thread's record, or null when it has none):
// its perf event's overflow (POLL_IN or POLL_HUP naming that event's descriptor; any
// such code when the thread has no record any more, its event just closed), or one of
// the agent's timers (SI_TIMER with the agent's cookie as its value). Anything else
// (kill, raise, setitimer, the program's own timers and descriptors) is the program's.
bool IsOwnSample(const ThreadRecord* thread, const siginfo_t* info);

const char* SampleSourceName(const SamplerSettings& settings);

}  // namespace cilkprof::agent
