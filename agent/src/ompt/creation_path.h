// Creation contexts of OpenMP tasks and parallel regions (issue 17; docs/OPENMP.md
// "Logical paths of tasks").
//
// libomp runs a task on whichever thread takes it, above its own frames: the code that
// created the task is not on that stack. So the OMPT callbacks record it when the task
// (or region) is created, on the creating thread: the creating task's own frames from
// the creation site out to its boundary (the libomp frame that invoked it; the stack's
// end for the initial task), linked to the creating task's own creation context. A
// sample of a running task then walks the task's frames up to its boundary and
// appends that chain (unwinder/logical.h, recorded paths).
//
// Paths are refcounted and immutable. A task or region record owns one reference; a
// path owns one on its parent, so a running task keeps its whole chain alive, and the
// signal handler of the thread that runs it may read the chain without a lock.
// References may be dropped on any thread (a task completes on another thread than the
// one that created it).
//
// Cost (a task fib creates millions of tasks): one walk of the creating task's own
// frames per capture, whose pcs are interned (a few thousand distinct sequences even
// when millions of tasks are created: only the chain node is per task), and a node from
// a per-thread free list. No lock the program could hold: the intern table and the
// shared node pool use short spin locks of their own. The walk starts at the creating
// code itself, from what libomp reports of its entry (the encountering task's
// enter_frame: the frame record of the libomp entry point, whose return address is
// codeptr_ra), so that neither libomp's frames nor the agent's are stepped: with
// frame pointers, no libunwind at all. When that report does not fit (no enter_frame,
// a CFA, a frame whose return address is not codeptr_ra: libomp entries that set
// enter_frame elsewhere, such as serialized regions or undeferred if(0) tasks), the
// capture unwinds from its own context as before, and counts it.
#pragma once

#include <cstdint>

#include "cilkprof/unwinder/logical.h"

struct ompt_frame_t;  // omp-tools.h

namespace cilkprof::agent::ompt {

struct CreationPath {
  // First member: `recorded.parent` points at the parent path's `recorded`.
  unwinder::RecordedPath recorded;
  uint32_t refs = 0;  // atomic accesses
};

// At the tool's initialize (not signal-safe): the boundary is the code of the load
// module holding `libomp_address` (libomp). False when no module holds it (captures
// then run to the stack's end).
bool ConfigureCreationPaths(const void* libomp_address);

// In an OMPT callback on the thread that creates a task (task_create) or opens a
// region (parallel_begin): the calling context of the creation site, out to the
// creating task's boundary, under `parent` (the creating task's path; null for the
// initial task). `encountering_frame` and `codeptr_ra` are the callback's (the
// encountering task's frame, the return address into the creating code; either may be
// null). Returns a new reference, or null when no path could be recorded (no memory):
// the task is then walked as the initial task's are. Not signal-safe.
const CreationPath* CaptureCreationPath(const CreationPath* parent,
                                        const ompt_frame_t* encountering_frame, const void* codeptr_ra);

// Captures so far, and those that could not start from libomp's report of the entry
// (above) and unwound from the callback instead. Any thread; counts from other threads
// may lag by up to kCaptureCountBatch each.
struct CaptureCounts {
  uint64_t captures = 0;
  uint64_t full_unwinds = 0;
};
inline constexpr uint32_t kCaptureCountBatch = 1024;
CaptureCounts CreationCaptureCounts();

// Reference counting. Release frees the path (and its parents whose last reference it
// held) for reuse; null is ignored. Any thread, not in a signal handler.
void Retain(const CreationPath* path);
void Release(const CreationPath* path);

// For the signal handler (async-signal-safe): the boundary ranges, and the recorded
// chain of the task running on the calling thread (null: not an OpenMP thread, or the
// initial task, walked physically). The callbacks must publish a thread's next task
// path (OmpThread::task_path) before they release the previous one.
// The user's code address where a task is created, for codeptr_ra as libomp reports
// it: itself, unless it lies inside libomp (the chunk tasks of a taskloop are created
// by __kmpc_taskloop, which reports its own call site): then the return address of the
// innermost frame outside libomp and the agent, found with libomp's CFI (libunwind);
// codeptr_ra if there is none. Not for signal handlers.
const void* UserCreationSite(const void* codeptr_ra);

// At an OpenMP thread's end (thread_end, on that thread): frees its interning cache.
void ForgetThreadCaches();
// In a fork child, on its only thread: the interning and node locks, which another
// thread of the parent may have held at the fork, are free.
void ReleaseLocksAfterFork();

const unwinder::CodeRange* BoundaryRanges(uint32_t* count);
// The C library's and the dynamic loader's code (logical.h, `callees`).
const unwinder::CodeRange* CalleeRanges(uint32_t* count);
const unwinder::RecordedPath* CurrentTaskPath();

}  // namespace cilkprof::agent::ompt
