// Loading the agent into a running process that was started without it (x86-64 Linux,
// through ptrace): one thread is borrowed to dlopen the agent and call
// cilkprof_agent_start_injected(); every register is restored and every thread
// detached. docs/INJECTION.md explains the technique and its limits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::cli::inject {

struct InjectionReport {
  std::chrono::microseconds longest_stop{0};  // longest time any one thread was held stopped
  int threads = 0;                            // threads stopped
  pid_t hijacked_tid = 0;                     // the thread that ran dlopen
};

// The refusals checked before any ptrace call: no such process, another user without
// CAP_SYS_PTRACE, Yama's ptrace_scope, a tracer already attached, a static binary, no
// dlopen in the target, the agent already loaded, the agent file not readable from the
// target's root. Each message says what to change.
Status CheckInjectable(pid_t pid, const std::string& agent_path);

// Yama's part of those refusals (CheckInjectable reads the scope from
// /proc/sys/kernel/yama/ptrace_scope; nullopt: no Yama): 3 refuses everyone, 2 all but
// CAP_SYS_PTRACE, 1 all but CAP_SYS_PTRACE and the target's ancestors (is_ancestor is
// asked only then). Apart so that a kernel without Yama can test it.
Status CheckYamaScope(std::optional<int> scope, bool privileged, const std::function<bool()>& is_ancestor);

// Whether the agent (a library named libcilkprof_agent*, or the file `agent_path`) is
// mapped in `pid`: then it is to be reached through its control socket, not injected.
bool AgentLoaded(pid_t pid, const std::string& agent_path = "");

// Loads `agent_path` into `pid` and calls cilkprof_agent_start_injected() in it. On any
// failure the target continues as if never touched (but see docs/INJECTION.md on a
// dlopen that never returns); the Status says what went wrong. Call it from one thread,
// and let no other thread of this process waitpid(-1) meanwhile.
Status InjectAgent(pid_t pid, const std::string& agent_path, InjectionReport* report);

}  // namespace cilkprof::cli::inject
