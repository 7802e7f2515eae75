// One profiled thread: its sample source, its CCT and counters, and what the flusher
// has sent of them.
//
// Ownership: created by the thread itself (RegisterCurrentThread), written by that
// thread's signal handler only; the flusher reads the CCT and counters concurrently
// (see cct.h) and owns `builder` and `sent_name`. After the thread unregisters
// (`exited` set with a release store) nothing writes it any more; the flusher sends its
// last delta and then frees it. Records of live threads are never freed.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <string>

#include "cct.h"
#include "cilkprof/unwinder/unwinder.h"
#include "delta_builder.h"
#include "locks/lock_clock.h"
#include "timeline/timeline_buffers.h"

namespace cilkprof::agent {

inline constexpr uint32_t kMaxFrames = 512;
// Deep stacks (docs/UNWINDER.md "Deep stacks"): a sample deeper than kMaxFrames keeps
// its innermost kMaxFrames - kKeepOutermost frames and its outermost kKeepOutermost,
// with the middle elided; a handler walks at most kMaxWalkFrames frames (then the
// sample keeps only its innermost frames, under the partial-unwind marker).
inline constexpr uint32_t kKeepOutermost = 64;
inline constexpr uint32_t kMaxWalkFrames = 1u << 16;

struct ThreadRecord {
  pid_t tid = 0;
  uint32_t thread_index = 0;
  clockid_t cpu_clock = CLOCK_THREAD_CPUTIME_ID;  // pthread_getcpuclockid: valid from any thread

  // Sample source (sample_source.h; changed under the registry lock). The kind is
  // chosen at the first arming and kept for the thread's life, and so is the perf
  // event's descriptor: the handler reads and re-arms it, so only the thread itself
  // (or the last holder of a record whose thread is gone) closes it.
  int source = 0;  // SourceKind; atomic accesses
  int perf_fd = -1;
  timer_t timer{};
  bool has_timer = false;
  // What the thread's samples are weighed by when it has no perf event: its CPU
  // clock (pthread_getcpuclockid, readable from any thread) or CLOCK_MONOTONIC.
  clockid_t sample_clock = CLOCK_MONOTONIC;

  // Owner-only state of the signal handler.
  volatile sig_atomic_t in_handler = 0;
  uint64_t last_clock_ns = 0;  // the sampling clock at the last sample (or arming)
  // Poisson sampling with a perf event (sample_interval.h): the current interval as
  // armed, the event's count when it began, how far the armed samples trail the
  // thread's schedule (a first interval below the floor is armed at the floor: the
  // sample is due `lag_ns` before the event overflows), and the generator. Set by
  // whoever arms the thread while its event is stopped, then by its handler (atomic
  // accesses).
  uint64_t interval_ns = 0;
  uint64_t interval_start_ns = 0;
  uint64_t lag_ns = 0;
  uint64_t interval_rng = 0;
  ThreadCct cct;
  SampleCounters counters;

  // Lock blame (issue 14, locks/). While the thread waits for a lock in an interposed
  // call: the lock's address (0 otherwise) and when the wait began (CLOCK_MONOTONIC);
  // the sampling handler reads them (its samples are then lock_wait at that lock) and
  // the final flush reports a wait still open. The thread writes them (atomic stores).
  uintptr_t waiting_lock = 0;
  uint64_t waiting_since_ns = 0;
  uint64_t open_wait_reported_ns = 0;  // the final flush's, under flush_mu
  // Owner-only: the virtual clocks with their generator (lock_clock.h).
  locks::LockClock lock_wait_clock;
  locks::LockClock lock_blame_clock;
  uint64_t lock_clock_rng = 0;
  // Owner-only: uncontended acquisitions left before the next one whose lock is looked
  // up (its record, if any, gets the interval's length: LockRecord.acquisitions), and
  // that interval's length (lock_accounting.h, SampleAcquisition).
  int32_t acquisition_countdown = 0;
  uint32_t acquisition_interval = 0;
  unwinder::Frame frames[kMaxFrames];  // here rather than on a possibly small stack

  // Timeline (issue 16, timeline/): the thread's event rings, when recording one.
  timeline::Slot timeline;

  // Lifecycle.
  bool exited = false;  // atomic accesses only
  // The agent's alternate signal stack of this thread (alt_stack.h), or nullptr: seen
  // here by a fork child, which unmaps the copies of the other threads' stacks.
  // Cleared (atomic store) before the thread unmaps it.
  void* alt_stack = nullptr;
  char exit_name[17] = {};

  // Unsampled time (unsampled.h), under the registry lock: whether the tail has been
  // measured, and the clock then.
  bool end_measured = false;
  uint64_t end_clock_ns = 0;

  // Flusher-only.
  ThreadDeltaBuilder builder;
  std::string sent_name;
  bool announced = false;
  ThreadRecord* next = nullptr;  // registry list
};

}  // namespace cilkprof::agent
