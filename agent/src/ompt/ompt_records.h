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

}  // namespace cilkprof::agent::ompt
