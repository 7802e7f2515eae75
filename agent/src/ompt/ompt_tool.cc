// The agent as libomp's OMPT tool (docs/OPENMP.md): ompt_start_tool, initialize and
// finalize, and the callbacks. The callbacks keep the records of ompt_records.h (the
// thread's worker state, its current task and task path) and call the modules that
// need the events (creation paths, work/span, locks).
//
// Hot path: task_create and task_schedule run once or twice per task of a program that
// may create millions. They take and release pooled records (no malloc), write a few
// words of the calling thread's record, and change the shared `working` counter only
// on a state transition. No logging, no locks (but the pools' one per batch). What the
// modules add is behind one predictable branch each when off: creation paths only while
// the agent samples (CapturePaths), work/span only when measured (g_workspan).
#include "ompt/ompt_tool.h"

#include <dlfcn.h>
#include <omp-tools.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "agent_state.h"
#include "instrumentation.h"
#include "log.h"
#include "ompt/creation_path.h"
#include "ompt/ompt_locks.h"
#include "ompt/ompt_records.h"
#include "ompt/ompt_runtime_view.h"
#include "ompt/ompt_workspan.h"

#define CILKPROF_EXPORT extern "C" __attribute__((visibility("default")))

namespace cilkprof::agent::ompt {
namespace {

bool g_active = false;  // initialize accepted (atomic accesses)

// Work/span of the task graph is measured (ompt_workspan.h): set by initialize, before
// libomp reports any other event, and never changed (a standby agent measures none:
// docs/OPENMP.md "Work and span of task graphs"). Read by every callback.
bool g_workspan = false;
// ompt_start_tool's runtime_version (libomp's static string), for the work/span model.
const char* g_runtime_version = nullptr;

namespace ws = workspan;

// The work/span engine's share of a callback: instrumentation, not the program's work,
// to the sampler (instrumentation.h), as the Cilk tool's hooks are. One predictable
// branch when work/span is off.
template <typename F>
inline void MeasureWorkSpan(F&& engine_calls) {
  if (__builtin_expect(!g_workspan, 0)) return;
  InstrumentationScope in_tool;
  engine_calls();
}

// Creation contexts are for the sampler: recorded only while the agent samples. Off in
// a standby agent before its attach (and between windows) and in the instrumented run
// of --workspan=separate (no sample source): a task then has no recorded path, and its
// samples, if any, are walked physically (docs/OPENMP.md "Logical paths of tasks").
inline bool CapturePaths() {
  return __atomic_load_n(&g_sampling, __ATOMIC_ACQUIRE) != 0 && g_state->sampler.sampled;
}

// A capture is the profiler's own cost, like the work/span engine's: a sample taken in
// it (often in the unwinder, whose own stack may not unwind) is instrumentation, not
// the program's work at a partial path.
const CreationPath* CaptureInTool(const CreationPath* parent, const ompt_frame_t* encountering_frame,
                                  const void* codeptr_ra) {
  InstrumentationScope in_tool;
  return CaptureCreationPath(parent, encountering_frame, codeptr_ra);
}

TaskRecord* TaskOf(const ompt_data_t* data) {
  return data != nullptr ? static_cast<TaskRecord*>(data->ptr) : nullptr;
}

RegionRecord* RegionOf(const ompt_data_t* data) {
  return data != nullptr ? static_cast<RegionRecord*>(data->ptr) : nullptr;
}

// The calling thread's record; made on the spot for a thread libomp did not announce
// (never seen with libomp 14, cheap to survive).
OmpThread* Thread() {
  OmpThread* t = CurrentOmpThread();
  return t != nullptr ? t : BeginOmpThread(CILKPROF_STATE_WORKING);
}

// `task` now runs on `t` (null: none, e.g. after its implicit task ended).
void RunTask(OmpThread* t, TaskRecord* task) {
  t->current_task = task;
  t->task_path = task != nullptr ? task->path : nullptr;
}

// ---- Threads -------------------------------------------------------------------

// Worker threads wait for work in libomp until their first implicit task: IDLE. The
// initial thread runs the program's serial code: WORKING.
void OnThreadBegin(ompt_thread_t type, ompt_data_t*) {
  BeginOmpThread(type == ompt_thread_initial ? CILKPROF_STATE_WORKING : CILKPROF_STATE_IDLE);
}

void OnThreadEnd(ompt_data_t*) {
  ForgetThreadCaches();
  EndOmpThread();
}

// ---- Parallel regions ------------------------------------------------------------

void OnParallelBegin(ompt_data_t* encountering_task, const ompt_frame_t* encountering_frame,
                     ompt_data_t* parallel_data, unsigned int requested_parallelism, int, const void* codeptr_ra) {
  RegionRecord* region = NewRegionRecord();
  parallel_data->ptr = region;
  if (region == nullptr) return;
  region->requested_threads = requested_parallelism;
  TaskRecord* encountering = TaskOf(encountering_task);
  MeasureWorkSpan([&] { ws::ParallelBegin(encountering, region); });
  // The region's implicit tasks run under the code that opened it (creation_path.h).
  if (CapturePaths()) {
    region->path = CaptureInTool(encountering != nullptr ? encountering->path : nullptr, encountering_frame, codeptr_ra);
  }
}

// On the encountering thread, after its implicit task of the region ended: it goes on
// with the task that opened the region (the initial task, or an outer implicit task
// under nested parallelism), which works.
void OnParallelEnd(ompt_data_t* parallel_data, ompt_data_t* encountering_task, int, const void*) {
  RegionRecord* region = RegionOf(parallel_data);
  MeasureWorkSpan([&] { ws::ParallelEnd(TaskOf(encountering_task), region); });
  if (region != nullptr) {
    Release(region->path);
    region->path = nullptr;
    FreeRegionRecord(region);
    parallel_data->ptr = nullptr;
  }
  OmpThread* t = Thread();
  if (t == nullptr) return;
  RunTask(t, TaskOf(encountering_task));
  SetWorkerState(t, CILKPROF_STATE_WORKING);
}

// The initial task (flags ompt_task_initial, begin at libomp's start, end at its
// shutdown) and each thread's implicit task of a region. An implicit task works from
// its begin; after its end a worker thread waits in libomp for the next region (IDLE),
// while the initial thread after the initial task's end runs exit code outside
// OpenMP (NOT_A_WORKER). parallel_data may be null at the end (libomp 14 reports a
// worker's end lazily, at its next fork barrier, when the region is gone).
void OnImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data,
                    unsigned int, unsigned int, int flags) {
  OmpThread* t = Thread();
  if (t == nullptr) return;
  if (endpoint == ompt_scope_begin) {
    TaskRecord* task = NewTaskRecord();
    task_data->ptr = task;
    if (task != nullptr) {
      task->flags = static_cast<uint32_t>(flags);
      // An implicit task runs under its region's creation context; the initial task
      // has none (walked physically to main).
      RegionRecord* region = (flags & ompt_task_initial) ? nullptr : RegionOf(parallel_data);
      task->path = region != nullptr ? region->path : nullptr;
      Retain(task->path);
      MeasureWorkSpan([&] { ws::ImplicitTaskBegin(region, task, static_cast<uint32_t>(flags)); });
    }
    RunTask(t, task);
    SetWorkerState(t, CILKPROF_STATE_WORKING);
    return;
  }
  TaskRecord* task = TaskOf(task_data);
  RunTask(t, nullptr);
  SetWorkerState(t, (flags & ompt_task_initial) ? CILKPROF_STATE_NOT_A_WORKER : CILKPROF_STATE_IDLE);
  if (task != nullptr) {
    MeasureWorkSpan([&] { ws::ImplicitTaskEnd(task); });
    Release(task->path);  // after RunTask: the handler no longer reads it
    task->path = nullptr;
    FreeTaskRecord(task);
    task_data->ptr = nullptr;
  }
}

// ---- Explicit tasks --------------------------------------------------------------

void OnTaskCreate(ompt_data_t* encountering_task, const ompt_frame_t* encountering_frame, ompt_data_t* new_task_data,
                  int flags, int has_dependences, const void* codeptr_ra) {
  TaskRecord* task = NewTaskRecord();
  new_task_data->ptr = task;
  if (task == nullptr) return;
  task->flags = static_cast<uint32_t>(flags);
  task->parent = TaskOf(encountering_task);
  // A taskloop's chunk tasks are created inside libomp: their site is the taskloop's.
  const void* site = UserCreationSite(codeptr_ra);
  if (CapturePaths()) {
    task->path = CaptureInTool(task->parent != nullptr ? task->parent->path : nullptr, encountering_frame, site);
  }
  MeasureWorkSpan([&] {
    ws::TaskCreate(task->parent, task, site, static_cast<uint32_t>(flags), has_dependences != 0);
  });
}

// prior stops running on this thread (completed, yielded, detached, or switched away
// from at a scheduling point) and next runs. next is null for an early or late fulfill
// (reported where the event is fulfilled: a late one completes a detached task, an
// early one comes while the task still runs, maybe on another thread, and completes
// nothing; ws::CompletesTask says which statuses complete the prior task, for both the
// engine and the record's release here).
// A task run inside a barrier or taskwait makes the waiting thread work; returning to
// the waiting task makes it idle again (next->waiting).
void OnTaskSchedule(ompt_data_t* prior_task, ompt_task_status_t prior_status, ompt_data_t* next_task) {
  TaskRecord* next = TaskOf(next_task);
  TaskRecord* prior = TaskOf(prior_task);
  MeasureWorkSpan([&] { ws::TaskSchedule(prior, prior_status, next); });
  if (next != nullptr) {
    OmpThread* t = Thread();
    if (t != nullptr) {
      RunTask(t, next);
      SetWorkerState(t, next->waiting ? CILKPROF_STATE_IDLE : CILKPROF_STATE_WORKING);
    }
  }
  if (prior != nullptr && ws::CompletesTask(prior_status)) {
    Release(prior->path);  // after RunTask(next): the handler no longer reads it
    prior->path = nullptr;
    FreeTaskRecord(prior);
    prior_task->ptr = nullptr;
  }
}

// ---- Synchronization -------------------------------------------------------------

// A barrier, taskwait or taskgroup as a whole: the work/span module joins tasks here.
// libomp 14 reports the region's end barrier as ompt_sync_region_barrier_implicit
// (OpenMP 5.0's kind), later versions as barrier_implicit_parallel: the engine
// handles both.
void OnSyncRegion(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task_data,
                  const void* codeptr_ra) {
  MeasureWorkSpan([&] {
    TaskRecord* task = TaskOf(task_data);
    if (endpoint == ompt_scope_begin) {
      ws::SyncRegionBegin(kind, task, codeptr_ra);
    } else {
      ws::SyncRegionEnd(kind, task, codeptr_ra);
    }
  });
}

// The waiting part of a barrier, taskwait or taskgroup: the thread is idle unless it
// runs a task meanwhile (task_schedule switches to WORKING and back).
void OnSyncRegionWait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                      ompt_data_t* task_data, const void*) {
  if (endpoint == ompt_scope_begin) MeasureWorkSpan([&] { ws::SyncRegionWaitBegin(kind, TaskOf(task_data)); });
  OmpThread* t = Thread();
  if (t == nullptr) return;
  TaskRecord* task = TaskOf(task_data);
  const bool begin = endpoint == ompt_scope_begin;
  if (task != nullptr) task->waiting = begin ? 1 : 0;
  SetWorkerState(t, begin ? CILKPROF_STATE_IDLE : CILKPROF_STATE_WORKING);
}

// ---- Registration ----------------------------------------------------------------

struct Registration {
  ompt_callbacks_t event;
  ompt_callback_t callback;
  const char* name;
};

template <typename F>
ompt_callback_t AsCallback(F* f) {
  return reinterpret_cast<ompt_callback_t>(f);
}

int Initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) {
    LogLine("libomp's OMPT interface has no ompt_set_callback: OpenMP tasks are profiled physically "
            "(no task paths, idleness or work/span)");
    return 0;
  }
  // libomp's code: the lookup function is libomp's own.
  AttachOmptRuntime(reinterpret_cast<const void*>(lookup));
  ConfigureCreationPaths(reinterpret_cast<const void*>(lookup));
  // Work/span (ompt_workspan.h) under `cilkprof run` unless CILKPROF_WORKSPAN=0; before
  // any callback is registered, so every region it measures is seen from its begin.
  // A standby agent measures none: OMPT delivers events from libomp's start only, and
  // an attach window would begin in the middle of the task graph.
  g_workspan = !g_state->standby && ws::SetUp(g_runtime_version);
  const Registration registrations[] = {
      {ompt_callback_thread_begin, AsCallback(&OnThreadBegin), "thread_begin"},
      {ompt_callback_thread_end, AsCallback(&OnThreadEnd), "thread_end"},
      {ompt_callback_parallel_begin, AsCallback(&OnParallelBegin), "parallel_begin"},
      {ompt_callback_parallel_end, AsCallback(&OnParallelEnd), "parallel_end"},
      {ompt_callback_implicit_task, AsCallback(&OnImplicitTask), "implicit_task"},
      {ompt_callback_task_create, AsCallback(&OnTaskCreate), "task_create"},
      {ompt_callback_task_schedule, AsCallback(&OnTaskSchedule), "task_schedule"},
      {ompt_callback_sync_region, AsCallback(&OnSyncRegion), "sync_region"},
      {ompt_callback_sync_region_wait, AsCallback(&OnSyncRegionWait), "sync_region_wait"},
  };
  std::string missing;
  for (const Registration& r : registrations) {
    const int result = set_callback(r.event, r.callback);
    if (result != ompt_set_always) missing += std::string(missing.empty() ? "" : ", ") + r.name;
  }
  if (!missing.empty()) {
    LogLine("libomp does not report every OMPT event the agent needs (" + missing +
            "): OpenMP task paths, idleness or work/span may be incomplete");
  }
  // Lock waits and blame (ompt_locks.h): optional events, reported by libomp when present.
  RegisterMutexCallbacks(set_callback);
  __atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
  return 1;  // nonzero: the tool stays active
}

void Finalize(ompt_data_t*) { __atomic_store_n(&g_active, false, __ATOMIC_RELEASE); }

ompt_start_tool_result_t g_tool = {&Initialize, &Finalize, {0}};

// Whether the agent takes part in this process (under `cilkprof run`, or a standby
// agent waiting for attach: OMPT registers only at libomp's start, never later).
bool AgentWantsTool() {
  return g_state != nullptr && (g_state->standby || AgentActive());
}

// Whether `address` lies in the agent's own load module (a comparison of addresses of
// ompt_start_tool would not do: the agent's reference to its own exported symbol goes
// through the GOT, which names whichever definition comes first).
bool InAgent(const void* address) {
  Dl_info mine, theirs;
  return dladdr(reinterpret_cast<const void*>(&Initialize), &mine) != 0 && dladdr(address, &theirs) != 0 &&
         mine.dli_fbase == theirs.dli_fbase;
}

const char* ModuleName(const void* address) {
  Dl_info info;
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0]) {
    return info.dli_fname;
  }
  return "the program";
}

}  // namespace

bool OmptToolActive() { return __atomic_load_n(&g_active, __ATOMIC_ACQUIRE); }

void AfterForkInChild() {
  ForgetOtherThreadsAfterFork();
  ReleaseLocksAfterFork();
}

}  // namespace cilkprof::agent::ompt

CILKPROF_EXPORT ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char* runtime_version) {
  using namespace cilkprof::agent::ompt;
  // Inactive agent (no aggregator, start-up failed, a fork child told not to follow):
  // no tool, so libomp runs with no callback at all.
  if (!AgentWantsTool()) return nullptr;
  g_runtime_version = runtime_version;
  return &g_tool;
}

namespace cilkprof::agent::ompt {

void NoteOpenMpWithoutTool(bool attach, bool injected, std::vector<std::string>* warnings) {
  const bool libomp = dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != nullptr;
  const bool gomp = dlsym(RTLD_DEFAULT, "GOMP_parallel") != nullptr;
  if (!libomp) {
    // Under `cilkprof run` the command says it before the program starts (it sees
    // libgomp among the program's libraries); an attach has nobody else to say it.
    if (gomp && attach) {
      warnings->push_back(
          "the program runs on GCC's OpenMP runtime (libgomp), which has no tool interface: its "
          "threads are profiled physically, with no task view (no logical paths of tasks, idleness "
          "or work/span); run it under `cilkprof run --openmp=libomp` for the task view");
    }
    return;
  }
  if (injected && !OmptToolActive()) {
    warnings->push_back(
        "the program runs on libomp, which takes its OMPT tool only when it starts, and the agent "
        "arrived later: OpenMP threads are profiled physically, with no task view (no logical paths "
        "of tasks, idleness or work/span); start the program under `cilkprof run`, or with the agent "
        "preloaded in standby (CILKPROF_STANDBY=1), to attach with the task view");
    return;
  }
  const char* omp_tool = getenv("OMP_TOOL");
  if (omp_tool != nullptr && strcasecmp(omp_tool, "disabled") == 0) {
    warnings->push_back(
        "OMP_TOOL=disabled: libomp does not start the agent's OMPT tool, so OpenMP threads are "
        "profiled physically, with no task view (no logical paths of tasks, idleness or work/span); "
        "unset OMP_TOOL for the task view");
    return;
  }
  const void* first = dlsym(RTLD_DEFAULT, "ompt_start_tool");
  if (!injected && first != nullptr && !InAgent(first)) {
    warnings->push_back(
        std::string("another OMPT tool (ompt_start_tool in ") + ModuleName(first) +
        ") comes before the agent's, and libomp starts only the first it finds: OpenMP threads are "
        "profiled physically, with no task view (no logical paths of tasks, idleness or work/span); "
        "profile without the other tool for the task view");
  }
}

}  // namespace cilkprof::agent::ompt
