// The OMPT adapter's records (issue 17; docs/OPENMP.md): what the agent keeps per
// OpenMP thread, per task and per parallel region, shared by the adapter's modules:
//   ompt_tool.cc        the OMPT tool: registration and the callbacks;
//   creation_path.*     the creation context of tasks and regions (logical paths);
//   ompt_workspan.*     work and span of the task graph;
//   ompt_locks.*        lock waits and blame from the mutex callbacks.
//
// A TaskRecord is the ompt_data_t::ptr of every task (initial, implicit, explicit), a
// RegionRecord that of a parallel region. Records come from per-thread pools: no
// malloc per task on the hot path. A task's record is released when the task
// completes (task_schedule with prior_task_status complete or late_fulfill), after
// every module saw the completion; descendants still running refer to what they need
// of it only through CreationPath references (refcounted, immutable) and through their
// own work/span state, never through `parent` after the parent completed.
//
// Signal safety: the sampling handler reads only OmpThread (its own thread's, through
// CurrentOmpThread(), initial-exec TLS) and the CreationPath it points to, which stays
// alive while the task that runs on the thread holds its reference.
#pragma once

#include <cstdint>

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent::ompt {

struct CreationPath;  // creation_path.h

inline constexpr uint32_t kModuleStateBytes = 64;

struct TaskRecord {
  // Creation context (an owned reference). Null: the initial task, whose samples are
  // walked physically to main.
  const CreationPath* path = nullptr;
  // In a sync_region_wait (barrier, taskwait, taskgroup) now: the thread that runs
  // this task is idle unless it runs another task inside the wait.
  uint32_t waiting = 0;
  uint32_t flags = 0;            // ompt_task_flag_t
  TaskRecord* parent = nullptr;  // the creating task, while both records live
  alignas(8) unsigned char workspan[kModuleStateBytes];  // ompt_workspan's state
};

struct RegionRecord {
  // Context of the code that opened the region (an owned reference); the region's
  // implicit tasks take it as theirs.
  const CreationPath* path = nullptr;
  uint32_t requested_threads = 0;
  alignas(8) unsigned char workspan[kModuleStateBytes];
};

struct OmpThread {
  // First member: AttachedRuntime()->current_worker() returns &worker. state is
  // maintained by the callbacks (docs/OPENMP.md "States").
  cilkprof_worker_t worker;
  // The creation context of the task running on this thread (null: the initial task,
  // or none); written by this thread's callbacks, read by its signal handler.
  const CreationPath* volatile task_path = nullptr;
  TaskRecord* current_task = nullptr;
};

// The calling thread's record, or null (not an OpenMP thread, or the tool inactive).
// Async-signal-safe.
OmpThread* CurrentOmpThread();

// ---- Threads (ompt_records.cc). Called from the OMPT callbacks, never from a handler.

// thread_begin: makes the calling thread's record (once; a second call returns the
// same one) with the given first state, and counts it in the runtime view's workers.
// Null only when memory ran out (the thread is then no OpenMP thread to the sampler).
OmpThread* BeginOmpThread(uint32_t first_state);
// thread_end: the thread leaves the workers; its pools go to the shared reserve (a
// record it freed may be reused by any thread). The record itself is kept (static
// storage per thread is TLS: nothing to free).
void EndOmpThread();
// In a fork child (the agent's atfork handler, on the child's only thread): the
// parent's other OpenMP threads do not exist here. Their records are let go (their
// slots serve the child's new threads), the locks they may have held at the fork are
// made anew, and the runtime view counts this thread alone (if it is an OpenMP thread):
// otherwise every sample of the child handed out idleness for the parent's workers.
void ForgetOtherThreadsAfterFork();
// The worker state (cilkprof_worker_state_t) of `t`, and the view's `working` counter
// with it: changed only on a transition (WORKING/OVERHEAD <-> IDLE/NOT_A_WORKER).
void SetWorkerState(OmpThread* t, uint32_t state);

// ---- Pools. A record comes from the calling thread's free list (refilled by blocks
// from the shared reserve or the heap: one lock or malloc per kPoolBatch records), and
// goes back to the free list of the thread that releases it, which may be another one
// (a task created on one thread completes on another): a list that grows past two
// batches hands one batch to the shared reserve. Released records are reset to their
// initial values when taken again. Null only when memory ran out.
inline constexpr uint32_t kPoolBatch = 256;
TaskRecord* NewTaskRecord();
void FreeTaskRecord(TaskRecord* record);
RegionRecord* NewRegionRecord();
void FreeRegionRecord(RegionRecord* record);

// Records taken and not yet released, all threads (for tests and finalize's check).
// Not exact while threads run callbacks.
int64_t LiveTaskRecords();
int64_t LiveRegionRecords();

}  // namespace cilkprof::agent::ompt
