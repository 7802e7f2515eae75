// The agent's exported entry points for the runtime and for programs:
//   cilkprof_tool_attach  the runtime's discovery call (cilkprof/runtime_abi.h): keeps
//                         the runtime's view for the sampler and returns the work/span
//                         tool's hooks;
//   cilkprof_probe        one synchronous sample under the `probe` metric
//                         (cilkprof/cilkprof.h);
// and AttachRunningRuntime (late_attach.h): the same view, found after the runtime
// started (an attach to a standby agent, an injected agent).
// This file is built with frame pointers: cilkprof_probe's frame must be walkable by
// the frame-pointer unwinder (it is frame 0 of the probe's context, then elided).
#include <dlfcn.h>
#include <ucontext.h>

#include "agent_state.h"
#include "blame.h"
#include "signal_mask.h"
#include "cilkprof/cilkprof.h"
#include "cilkprof/runtime_abi.h"
#include "late_attach.h"
#include "log.h"
#include "runtime_view.h"
#include "timeline/timeline_control.h"

#include "workspan/workspan.h"

#define CILKPROF_EXPORT extern "C" __attribute__((visibility("default")))

namespace cilkprof::agent {
namespace {

std::string RuntimeVersionMismatch(const cilkprof_runtime_t* runtime) {
  return "the task-parallel runtime " + std::string(runtime->name ? runtime->name : "(unnamed)") +
         " speaks profiler ABI version " + std::to_string(runtime->abi_version) + ", this agent version " +
         std::to_string(CILKPROF_RUNTIME_ABI_VERSION) +
         "; its strands are profiled physically, without logical paths or blame (use a runtime "
         "and an agent from the same release)";
}

}  // namespace

bool AttachRunningRuntime(std::string* why) {
  if (AttachedRuntime() != nullptr) return true;
  using ViewFunction = const cilkprof_runtime_t* (*)();
  const auto view = reinterpret_cast<ViewFunction>(dlsym(RTLD_DEFAULT, "cilkprof_runtime_view"));
  if (view == nullptr) {
    *why = "no task-parallel runtime with late attach is loaded (a program without the Cilk runtime, or "
           "one built before issue 15): strands are profiled physically";
    return false;
  }
  const cilkprof_runtime_t* runtime = view();
  if (runtime == nullptr) {
    *why = "the Cilk runtime has not started yet; it attaches itself when the program first enters it";
    return false;
  }
  if (runtime->abi_version != CILKPROF_RUNTIME_ABI_VERSION) {
    *why = RuntimeVersionMismatch(runtime);
    return false;
  }
  AttachRuntime(runtime);
  timeline::OfferEventsToRuntime();
  return true;
}

}  // namespace cilkprof::agent

CILKPROF_EXPORT const cilkprof_hooks_t* cilkprof_tool_attach(const cilkprof_runtime_t* runtime) {
  using namespace cilkprof::agent;
  if (runtime == nullptr) return nullptr;
  if (runtime->abi_version != CILKPROF_RUNTIME_ABI_VERSION) {
    LogLine(RuntimeVersionMismatch(runtime));
    return nullptr;
  }
  if (!AgentActive()) return nullptr;
  AttachRuntime(runtime);
  timeline::OfferEventsToRuntime();  // steals and sync waits, with the timeline on (issue 16)
  return workspan::AttachHooks(runtime);
}

CILKPROF_EXPORT __attribute__((noinline)) void cilkprof_probe(void) {
  using namespace cilkprof::agent;
  ThreadRecord* t = tls_thread;
  if (t == nullptr || __atomic_load_n(&g_sampling, __ATOMIC_RELAXED) == 0 || t->in_handler) return;
  t->in_handler = 1;  // keeps the sampling handler off the record meanwhile
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  ucontext_t context;
  // The context of this very frame: rip just after the call, rsp/rbp/callee-saved as
  // here. The unwinder elides this frame (agent code) and walks on to the caller.
  if (getcontext(&context) == 0) {
    const FaultSignalsOpen faults(&context);  // a fault in the walk must reach the guard
    TakeProbe(t, &context, g_handler_mode);
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t->in_handler = 0;
}
