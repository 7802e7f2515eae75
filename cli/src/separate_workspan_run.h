// `cilkprof run --workspan=separate` (the default): work and span measured in a second
// run of the program, so that the instrumentation never touches the sampled one.
//
// The work/span tool's hooks cost tens of nanoseconds each, and on a program that
// spawns every few hundred nanoseconds (fib) they slow it several times and dilate the
// program's own code (caches, branch predictors) by up to half again: samples taken
// beside them describe the instrumented program. So the program runs twice: first
// sampled with the tool off (CILKPROF_WORKSPAN=0), then, for programs that ran on the
// Cilk runtime or on libomp (OpenMP tasks through OMPT), instrumented and not sampled (CILKPROF_SAMPLE_SOURCE=none), its
// standard output discarded and its standard error kept aside; the second run's
// figures are grafted into the first run's profile (aggregator/workspan_graft.h).
// docs/WORKSPAN.md, "Instrumentation and the sampled profile", says what this
// assumes: a deterministic computation, and input the second run can read again.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "child_process.h"
#include "cilkprof/aggregator/server.h"
#include "progress.h"

namespace cilkprof::cli {

// Whether a second run can read the program's standard input again, noted when
// cilkprof starts, before the program reads any of it: a regular file (read again
// from the same offset), a terminal or another character device such as /dev/null, or
// no standard input at all. Not a pipe or a socket: what the first run read is gone.
class StdinReplay {
 public:
  static StdinReplay Note();
  bool possible() const { return why_not_.empty(); }
  // "standard input is a pipe": why a second run could not read it again.
  const std::string& why_not() const { return why_not_; }
  // Puts a regular file back where the first run began reading it; true otherwise.
  bool Rewind() const;

 private:
  bool regular_ = false;
  off_t offset_ = 0;
  std::string why_not_;
};

struct SeparateRunContext {
  std::string program_path;
  std::vector<std::string> command;
  // The agent's environment for the instrumented run, given its socket.
  std::function<std::vector<std::string>(const std::string& socket)> environment;
  const ForwardedSignals* signals = nullptr;
  const InheritedFds* inherited = nullptr;
  const StdinReplay* stdin_replay = nullptr;
  const ChildExit* sampled_exit = nullptr;  // a program that failed is not run again
};

struct SeparateRunOutcome {
  // Why work and span are not in the profile although the program ran on the Cilk
  // runtime, for the summary ("the instrumented run exited with status 1: ..."); empty
  // when they were grafted, or when no process ran on the runtime (nothing to measure).
  std::string problem;
  // The instrumented run was ended by SIGINT, SIGTERM or SIGHUP: cilkprof ends the same
  // way once it has reported (command_run.cc).
  int signal = 0;
};

// Runs the program again, instrumented, if any of the `sampled` profiles is of a
// process that ran on the Cilk runtime or on libomp, and grafts the figures of each such process
// into its profile (matched by executable and order of start), rewriting the file.
SeparateRunOutcome MeasureWorkSpanSeparately(const SeparateRunContext& context,
                                             const std::vector<aggregator::WrittenProfile>& sampled,
                                             Progress& progress);

}  // namespace cilkprof::cli
