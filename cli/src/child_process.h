// Running the profiled program as a child and waiting for it while forwarding
// SIGINT, SIGTERM and SIGHUP sent to cilkprof.
//
// The program gets the world it would have had without us: the signal dispositions
// and mask cilkprof inherited (a SIG_IGN of SIGINT or SIGHUP from nohup or a shell's
// `trap '' HUP` stays SIG_IGN), the file descriptors cilkprof inherited and none of
// its own, our process group and controlling terminal (so job control works: Ctrl-C
// and Ctrl-Z at a terminal reach the program directly), and the environment the
// caller builds (ours plus the agent's variables).
//
// Signals are handled synchronously: ForwardedSignals blocks them (and SIGCHLD) in
// the calling thread before any other thread exists, so every thread inherits the
// mask and the waiting loop takes them with sigtimedwait; no handler runs. A signal
// the terminal sends (Ctrl-C) already reaches the program, which shares our process
// group, so only signals sent by another process (kill) are passed on. A signal
// cilkprof inherited as ignored is discarded by the kernel before we see it; the
// program ignores it too, so there is nothing to pass on.
//
// Waiting: RunChild returns when the program (our child) ends. Processes it leaves
// running in the background are not waited for here; the collector waits a bounded
// time for their agents' last messages (command_run.cc).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::cli {

class ForwardedSignals {
 public:
  // Blocks SIGINT, SIGTERM, SIGHUP, SIGCHLD in this thread. A SIGCHLD inherited as
  // SIG_IGN would make the kernel reap the program before we can read its status:
  // it is set to SIG_DFL here, and back to SIG_IGN in the program before exec.
  ForwardedSignals();
  ~ForwardedSignals();  // restores the previous mask and SIGCHLD disposition
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;
  const sigset_t& previous_mask() const { return previous_; }
  const sigset_t& blocked() const { return blocked_; }
  bool sigchld_was_ignored() const { return sigchld_was_ignored_; }

 private:
  sigset_t previous_;
  sigset_t blocked_;
  bool sigchld_was_ignored_ = false;
};

// The file descriptors open when cilkprof started, noted before it opens any of its
// own (the collector's sockets, the profile files): the program gets exactly these.
class InheritedFds {
 public:
  static InheritedFds Snapshot();
  bool Contains(int fd) const;

 private:
  std::vector<int> fds_;  // sorted
};

struct ChildExit {
  int exit_code = 0;        // the status a shell would report: code, or 128+signal
  int signal = 0;           // the signal that killed the program; 0 when it exited
  std::string description;  // "exited with status 3", "killed by signal 9 (Killed)"
};

// Descriptors of ours the program gets as its standard input, output or error instead
// of the inherited ones (-1: the inherited one). A second run of the program whose
// output must not be seen twice (command_run.cc, --workspan=separate) uses them.
struct ChildStdio {
  int in = -1, out = -1, err = -1;
};

// Starts `path` with `argv` and `env` in the world described above, waits for it,
// and forwards signals. `on_started` hears the program's pid as soon as it exists,
// before it runs (or fails to exec).
Result<ChildExit> RunChild(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const ForwardedSignals& signals,
                           const InheritedFds& inherited, const std::function<void(pid_t)>& on_started,
                           const ChildStdio& stdio = {});

}  // namespace cilkprof::cli
