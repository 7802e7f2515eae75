// What the sampler knows about the task-parallel runtime (cilkprof/runtime_abi.h) and
// about code that must never appear in a logical path.
//
// The runtime hands the agent its view once, through cilkprof_tool_attach()
// (runtime_attach.cc), on the thread that starts the runtime. From then on the signal
// handler reads it: the runtime pointer (acquire load) and the elided code ranges
// (count with acquire, then the ranges below it). Writers (start-up, attach) are
// serialized by a mutex and publish each range before the count that covers it, so
// the handler never sees a half-written range. Nothing here is ever removed.
#pragma once

#include <cstdint>
#include <string>

#include "cilkprof/runtime_abi.h"
#include "cilkprof/unwinder/logical.h"

namespace cilkprof::agent {

inline constexpr uint32_t kMaxElidedRanges = 32;

// The runtime attached to this process, or null (no runtime, or not started yet).
// Async-signal-safe.
const cilkprof_runtime_t* AttachedRuntime();

// Its name (cilkprof_runtime_t::name, e.g. "cilk-model"), for the Goodbye; "" when no
// runtime attached (none started, or its ABI version was refused). A fork child
// inherits the parent's attach with the rest of its memory, and so reports the same
// name. Not signal-safe (allocates).
std::string AttachedRuntimeName();

// The elided ranges and their number. Async-signal-safe.
const unwinder::CodeRange* ElidedRanges(uint32_t* count);

// Adds the executable segments of the load module holding `address` (found with
// dl_iterate_phdr) to the elided ranges. Not signal-safe. False if no module holds it.
bool ElideModuleOf(const void* address);

// Records the runtime for the sampler and elides its code: the module holding
// current_worker (the runtime library) and the module holding Boost.Context's
// jump_fcontext if the process has one (the runtime's context switch). Not signal-safe.
void AttachRuntime(const cilkprof_runtime_t* runtime);

}  // namespace cilkprof::agent
