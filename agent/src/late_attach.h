// Attaching to a runtime that started before the agent was attached (issue 15: a
// standby agent attached later, or an agent injected with ptrace), and the work/span
// tool's window: the hooks go in at an attach and out at a detach. The runtime's side:
// cilkprof_runtime_view and cilkprof_runtime_set_hooks (cilkprof/runtime_abi.h,
// docs/RUNTIME.md "Late attach"). Internal to libcilkprof_agent.so; none of this is
// signal-safe.
//
// Work/span sees whole top-level computations only: the runtime applies a change of
// hooks when no computation runs. So a window's work/span covers the computations that
// begin after the attach (a computation running at the attach is not measured; one
// running at the detach is measured to its end, but only what ended before the
// detach's final flush is sent: its finished invocations' on-work rows and its spawns
// and syncs, not its work, span or on-span rows, which join the totals at its end).
#pragma once

#include <string>

namespace cilkprof::agent {

// Finds a task-parallel runtime that started before the agent saw it and attaches the
// sampler to it (AttachRuntime, runtime_view.h): logical paths and idleness from now
// on. True if a runtime is attached (already, or now). False with the reason in `why`
// when there is none to attach (a program without the Cilk runtime, one that has not
// entered it yet: then the runtime attaches itself when it starts, or a runtime built
// without late attach) or its ABI version is not this agent's. Not an error.
bool AttachRunningRuntime(std::string* why);

namespace workspan {

// Standby: the runtime's start-up discovery (cilkprof_tool_attach) returns no hooks,
// so the program runs uninstrumented until InstallWorkSpanHooks. Set before the
// runtime can start (at the agent's start).
void SetStandby(bool standby);

// Opens a work/span window: sets the tool up (the first time: configuration from the
// environment, clock calibration, ~5 ms), forgets what the aggregator of an earlier
// window was sent, and asks the runtime to install the hooks (from the next moment no
// computation runs). Nothing when the process has no runtime with late attach, or
// work/span is off (CILKPROF_WORKSPAN=0). Takes flush_mu: call it without holding it.
void InstallWorkSpanHooks();

// The detach's final work/span frame: what was measured in the window so far, to the
// transport; then the window is closed (no more sends, also not from the program's
// threads when a computation ends, nor at exit). Call with flush_mu held, before the
// Goodbye.
void FlushWorkSpanForDetach();

// Asks the runtime to remove the hooks (from the next moment no computation runs:
// after the one running now, if any) and closes the window if still open. After
// FlushWorkSpanForDetach. Does not take flush_mu.
void RemoveWorkSpanHooks();

}  // namespace workspan
}  // namespace cilkprof::agent
