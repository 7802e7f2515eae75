// Lock calls made as tail calls (issue 14), and OpenMP tasks created by a tail call
// to libomp's entry point (issue 17, ompt/creation_path.cc).
//
// A function whose last act is to unlock (std::lock_guard's destructor at the end of a
// critical section) is usually compiled to jump to pthread_mutex_unlock, not call it:
// its frame is gone by the time the interposed unlock runs, and the return address on
// the stack is its caller's. Unwound as is, the blame would land in the caller, one
// level above the critical section. The call instruction before that return address
// says what happened: it called (directly, or through a PLT stub or a GOT slot) the
// function that tail-called us, not the lock function. That function's entry is then
// the innermost frame of the lock's context (it symbolizes to the function's first
// line: the critical section's function, not its exact line).
//
// Async-signal-safe: reads the code and the GOT slot under the unwinder's fault guard,
// and FunctionEntryOf (function_entry.h).
#pragma once

#include <cstdint>

namespace cilkprof::agent::locks {

// The entry of the function that tail-called the interposed lock function, given the
// return address of the first frame outside the agent; 0 when the call there was to
// the agent itself or to the runtime's library (no tail call: the runtime reported the
// lock call, ompt/ompt_locks.h), or when it cannot be told (an indirect call through
// a register, a stub not yet bound, code that cannot be read).
uintptr_t TailCaller(uintptr_t return_address);

}  // namespace cilkprof::agent::locks
