// Running the profiled program as a child and waiting for it while forwarding
// SIGINT, SIGTERM and SIGHUP sent to cilkprof.
//
// Signals are handled synchronously: ForwardedSignals blocks them (and SIGCHLD) in
// the calling thread before any other thread exists, so every thread inherits the
// mask and the waiting loop takes them with sigwaitinfo; no handler runs. A signal
// the terminal sends (Ctrl-C) already reaches the program, which shares our process
// group, so only signals sent by another process (kill) are passed on.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::cli {

class ForwardedSignals {
 public:
  ForwardedSignals();   // blocks SIGINT, SIGTERM, SIGHUP, SIGCHLD in this thread
  ~ForwardedSignals();  // restores the previous mask
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;
  const sigset_t& previous_mask() const { return previous_; }
  const sigset_t& blocked() const { return blocked_; }

 private:
  sigset_t previous_;
  sigset_t blocked_;
};

struct ChildExit {
  int exit_code = 0;        // the status a shell would report: code, or 128+signal
  std::string description;  // "exited with status 3", "killed by signal 9 (Killed)"
};

// Starts `path` with `argv` and `env` (the child gets the signal mask and default
// dispositions it would have had without us), waits for it, and forwards signals.
Result<ChildExit> RunChild(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const ForwardedSignals& signals);

}  // namespace cilkprof::cli
