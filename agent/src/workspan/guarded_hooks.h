// The work/span tool's hook table as the runtime calls it: every hook wrapped so that
// the sampler knows the thread is in the tool's code (instrumentation.h) and charges a
// sample taken there to `instrumentation`, never to the program's work, overhead or
// idleness (docs/WORKSPAN.md, "Instrumentation and the sampled profile").
//
// To add a hook to cilkprof_hooks_t (runtime_abi.h): add one line
//   CILKPROF_GUARD_HOOK(name)
// to kGuardedMembers in guarded_hooks.cc, next to the others. The wrapper's type comes
// from the member's, whatever its arguments; a static_assert there refuses a hook
// table whose size is not covered by the list, so a new hook cannot go unwrapped.
#pragma once

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent::workspan {

// The table the runtime gets instead of `inner`: each non-null member of `inner`
// becomes a wrapper that raises the thread's instrumentation depth, calls the inner
// hook and lowers it; null members stay null (the runtime skips them). Returns nullptr
// for nullptr. One table per process (static storage), filled once, before the runtime
// calls any hook (cilkprof_tool_attach runs before any worker runs user code); a
// later call replaces the inner table (tests).
const cilkprof_hooks_t* GuardHooks(const cilkprof_hooks_t* inner);

}  // namespace cilkprof::agent::workspan
