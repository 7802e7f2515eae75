// The runtime view "libomp-ompt" (cilkprof/runtime_abi.h) that the OMPT tool gives the
// sampler (docs/OPENMP.md, "States, idleness and overhead"): workers = OpenMP threads
// alive, working = those not IDLE, current_worker = &CurrentOmpThread()->worker.
// libomp's code is elided from every path, and a WORKING sample whose interrupted pc
// lies in libomp is runtime overhead (blame.cc asks IsOmptOverheadPc).
#pragma once

#include <cstdint>

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent::ompt {

inline constexpr char kOmptRuntimeName[] = "libomp-ompt";

// At the tool's initialize, on the thread that starts libomp: remembers libomp's code
// (the load module holding `libomp_address`, e.g. the lookup function libomp passed),
// elides it, and attaches the view (runtime_view.h). Not signal-safe. False when no
// module holds the address (the view is attached anyway, without the overhead rule).
bool AttachOmptRuntime(const void* libomp_address);

// The view, attached or not (static storage).
const cilkprof_runtime_t* OmptRuntimeView();

// Whether `runtime` is this view and `pc` lies in libomp's code. Async-signal-safe.
bool IsOmptOverheadPc(const cilkprof_runtime_t* runtime, uintptr_t pc);

// The view's counters (ompt_records.cc changes them on thread begin/end and on state
// transitions). Relaxed atomic read-modify-writes: the sampler reads them racily, as
// for the Cilk runtime (blame.h).
void AddWorkers(int32_t delta);
void AddWorking(int32_t delta);
// In a fork child (ompt_records.cc, ForgetOtherThreadsAfterFork): the counters start
// again from the one thread the child has.
void SetCounts(uint32_t workers, uint32_t working);

}  // namespace cilkprof::agent::ompt
