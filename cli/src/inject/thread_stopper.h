// Holds every thread of a target in a ptrace stop (PTRACE_SEIZE + PTRACE_INTERRUPT),
// lets them go one by one, and measures how long each was held.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <chrono>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::cli::inject {

class ThreadStopper {
 public:
  using Clock = std::chrono::steady_clock;
  struct Held {
    pid_t tid = 0;
    bool stopped = false;
    Clock::time_point stopped_since;  // when we sent the interrupt
    int pending_signal = 0;           // stopped on its way to a signal: delivered on release
    user_regs_struct regs{};          // at the stop
  };

  explicit ThreadStopper(pid_t pid) : pid_(pid) {}
  // Releases whatever is still held: an early return never leaves a thread stopped.
  ~ThreadStopper() { ReleaseAll(); }
  ThreadStopper(const ThreadStopper&) = delete;
  ThreadStopper& operator=(const ThreadStopper&) = delete;

  // Seizes and stops every thread, re-reading /proc/PID/task until no new thread
  // appears while all known ones are stopped. Threads that exit meanwhile are dropped.
  Status StopAll();
  // Lets every held thread run on (still seized), delivering pending signals.
  Status ResumeAll();
  // Detaches one thread: it runs on exactly where it was stopped.
  void Release(pid_t tid);
  void ReleaseAll();

  std::vector<Held>& threads() { return held_; }
  int threads_seen() const { return threads_seen_; }
  // The longest time any thread was held stopped, up to now.
  std::chrono::microseconds longest_stop() const { return longest_stop_; }

 private:
  Status Seize(pid_t tid);
  Status WaitForStops();
  void EndStop(Held& held);

  pid_t pid_;
  std::vector<Held> held_;
  int threads_seen_ = 0;
  std::chrono::microseconds longest_stop_{0};
};

}  // namespace cilkprof::cli::inject
