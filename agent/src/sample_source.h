// Per-thread sample sources: what makes the kernel interrupt a thread with the
// profiling signal every period of its clock.
//
//   cpu clock: a perf_event_open software task-clock counter of the thread with
//              sample_period = period, O_ASYNC, F_SETSIG and F_SETOWN_EX(F_OWNER_TID),
//              so each overflow signals that very thread; when perf events are denied,
//              timer_create on the thread's CPU-time clock with SIGEV_THREAD_ID.
//   wall clock: timer_create(CLOCK_MONOTONIC) with SIGEV_THREAD_ID: idle and blocked
//              threads are sampled too.
// Arm/Disarm/Retarget may run on any thread of the process (they address the thread by
// tid and by its CPU clock id). Not signal-safe. Callers hold the registry lock.
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "thread_record.h"

namespace cilkprof::agent {

struct SamplerSettings {
  ClockKind clock = ClockKind::kCpu;
  bool use_perf = true;  // cpu clock only
  uint64_t period_ns = 1000000;
  int signo = 0;
};

// Tries a perf_event task-clock counter on the calling thread; false with the reason.
bool PerfEventsAvailable(std::string* why);

bool ArmThread(ThreadRecord* thread, const SamplerSettings& settings, std::string* error);
void DisarmThread(ThreadRecord* thread);
// In a fork child: drops the parent's sources without touching them (the perf fd is
// shared with the parent; a timer is not inherited at all).
void ForgetInheritedSource(ThreadRecord* thread);
// Moves an armed thread to `settings.signo`.
bool RetargetThread(ThreadRecord* thread, const SamplerSettings& settings, std::string* error);

const char* SampleSourceName(const SamplerSettings& settings);

}  // namespace cilkprof::agent
