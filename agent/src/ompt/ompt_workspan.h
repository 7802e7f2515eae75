// Work and span of OpenMP task graphs, from OMPT events (issue 17; docs/OPENMP.md
// "Work and span of task graphs", definitions as docs/WORKSPAN.md).
//
// The OMPT tool's callbacks (ompt_tool.cc) call the functions below; they keep each
// task's state in TaskRecord::workspan and each region's in RegionRecord::workspan
// (ompt_records.h), and what must outlive a record (the places a task's end is joined:
// its creator's taskwait, its taskgroup, its region's barrier) in refcounted join
// cells of their own (ompt_workspan.cc).
//
// The model (docs/OPENMP.md):
//  - A strand is the time a task runs on a thread between two events (its start or
//    resumption, a task creation, a sync, its suspension or completion); work T1 is the
//    sum of all strands, on the configured clock of the running thread.
//  - Every task keeps its span so far. A created task starts at its creator's span so
//    far at the creation (plus the burden, on both sides, for the burdened span).
//  - A taskwait joins the task's direct children, the end of a taskgroup every task
//    created in it and their descendants, a barrier every task of the team's region
//    created before it, the end of a parallel region everything in the region. Joins
//    take the longest of the joined spans.
//  - Tasks with `depend` clauses: their dependences are not edges of the dag (each
//    such task starts at its creator's span at its creation). The span is then a lower
//    bound and the parallelism an upper bound; the report says how many tasks had
//    dependences.
//  - Top-level computations are the outermost parallel regions, composed in series;
//    the initial task's serial code outside them is not measured (as serial code
//    outside a cilk::scope), nor are tasks created outside any parallel region.
//  - Per task-creation site (codeptr_ra, kind spawn): count = tasks created there;
//    over the top-most ones (no ancestor task created at the same site):
//    work-on-work = the work of the task and of all its descendants, span-on-work =
//    the task's span from its creation to its completion (descendants it joined
//    included), burdened likewise. Work-on-span and span-on-span: the same figures of
//    the top-most tasks on the critical path of the ended top-level regions (as the
//    Cilk engine's span profiles: at a join the longest path's profile wins), a task's
//    work there being its own and its descendants' completed before it.
//
// Contract: the event functions never call malloc, never take a lock the program may
// hold and never block (join cells come from per-thread pools over mmap, like the Cilk
// tool's, agent/src/workspan/pool.h). They run on the thread of the OMPT event, are
// never called from signal handlers, and do nothing until Configure() succeeded.
#pragma once

#include <omp-tools.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ompt/ompt_records.h"
#include "workspan/engine.h"

namespace cilkprof::agent::ompt::workspan {

using ClockKind = cilkprof::agent::workspan::ClockKind;

struct Config {
  ClockKind clock = ClockKind::kTsc;
  uint64_t burden_ticks = 15000;  // per task creation, on the child and on the creator
};

// Maps the engine's tables. False: no memory (the engine stays off).
bool Configure(const Config& config);
bool Enabled();

// cilkprof_charge(units): advances the counter clock of the calling thread.
void Charge(uint64_t units);

// ---- Events (the OMPT callbacks' arguments, already mapped to records) ----

// ompt_callback_parallel_begin / _end, on the encountering task's thread.
void ParallelBegin(TaskRecord* encountering, RegionRecord* region);
void ParallelEnd(TaskRecord* encountering, RegionRecord* region);
// ompt_callback_implicit_task. `region` may be null at the end (libomp reports the
// workers' ends at their next fork) and for the initial task (flags ompt_task_initial).
void ImplicitTaskBegin(RegionRecord* region, TaskRecord* task, uint32_t flags);
void ImplicitTaskEnd(TaskRecord* task);
// ompt_callback_task_create (explicit tasks; `parent` = the encountering task).
void TaskCreate(TaskRecord* parent, TaskRecord* child, const void* codeptr_ra, uint32_t flags,
                bool has_dependences);
// Whether a task_schedule with this prior_task_status completes the prior task (OMPT
// 5.1, "ompt_task_status_t"; libomp 14's kmp_tasking.cpp): complete, cancel, and
// late_fulfill (a detached task, whose structured block had ended with status detach,
// completes when its event is fulfilled; reported on the fulfilling thread, next
// null). Not early_fulfill: the event was fulfilled while the task still runs its
// structured block, possibly on another thread, and the task's own end follows with
// status complete. The tool core frees the record exactly then (ompt_tool.cc).
inline bool CompletesTask(ompt_task_status_t status) {
  return status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_late_fulfill;
}
// ompt_callback_task_schedule: `prior` stops running (a status that CompletesTask: it
// completed; its state is released here), `next` runs. An early fulfill (prior
// running elsewhere, next null) changes nothing.
void TaskSchedule(TaskRecord* prior, ompt_task_status_t prior_status, TaskRecord* next);
// ompt_callback_sync_region (begin / end) and ompt_callback_sync_region_wait (begin):
// barriers of every kind, taskwait, taskgroup (whose begin opens the group; its wait
// begins at sync_region_wait). Other kinds (reduction) are ignored.
void SyncRegionBegin(ompt_sync_region_t kind, TaskRecord* task, const void* codeptr_ra);
void SyncRegionWaitBegin(ompt_sync_region_t kind, TaskRecord* task);
void SyncRegionEnd(ompt_sync_region_t kind, TaskRecord* task, const void* codeptr_ra);

// ---- Results ----

struct Extra {
  uint64_t tasks = 0;              // explicit tasks created in measured regions
  uint64_t tasks_with_dependences = 0;
};

// Whole-program figures of the ended top-level regions and per-site figures, in the
// Cilk tool's types (SiteKind::kSpawn sites), ready for workspan::Reporter.
cilkprof::agent::workspan::Snapshot TakeSnapshot(Extra* extra = nullptr);
bool EngineFailed();

// Called on the thread that ended a top-level region, after its figures joined the
// whole program's. Set before the first event.
void SetTopLevelEndCallback(void (*callback)());

// Tests only, with nothing running: forget everything measured.
void ResetForTesting();

// ---- The agent side (ompt_workspan_attach.cc) ----

// At tool initialization (ompt_initialize): the environment as for the Cilk tool
// (CILKPROF_WORKSPAN, CILKPROF_WS_CLOCK, CILKPROF_CLOCK=counter, CILKPROF_BURDEN),
// the engine, the reporter, the exit handler. `runtime_version`: what produced the events
// (ompt_start_tool's runtime_version, e.g. "LLVM OMP version: 5.0.20140926"). Returns whether
// work/span is measured.
bool SetUp(const char* runtime_version);

// As workspan::AppendFrames / AppendSnapshotFrames (agent/src/workspan/workspan.h):
// the flusher's lock held. Return 0 when the OMPT tool measures nothing.
size_t AppendFrames(std::vector<std::string>* frames);
size_t AppendSnapshotFrames(std::vector<std::string>* frames);

}  // namespace cilkprof::agent::ompt::workspan
