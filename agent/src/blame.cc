#include "blame.h"

#include "agent_state.h"
#include "instrumentation.h"
#include "locks/tail_call.h"
#include "ompt/creation_path.h"
#include "ompt/ompt_runtime_view.h"

#include "cilkprof/unwinder/logical.h"
#include "runtime_view.h"
#include "timeline/timeline_buffers.h"

namespace cilkprof::agent {
namespace {

struct WorkerView {
  cilkprof_worker_t* worker = nullptr;
  uint32_t state = CILKPROF_STATE_NOT_A_WORKER;
  bool tool_path = false;  // the runtime runs a path only the tool makes it take
  uint32_t workers = 0;
  uint32_t working = 0;
};

WorkerView ReadWorker() {
  WorkerView v;
  const cilkprof_runtime_t* runtime = AttachedRuntime();
  if (runtime == nullptr) return v;
  v.worker = runtime->current_worker();
  if (v.worker == nullptr) return v;
  v.state = v.worker->state;
  v.tool_path = v.worker->tool_path != 0;
  v.workers = *runtime->workers;
  v.working = *runtime->working;
  return v;
}

unwinder::LogicalResult Unwind(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode,
                               const WorkerView& view, bool synchronous) {
  unwinder::LogicalRequest request;
  request.mode = mode;
  request.context = context;
  request.segment = view.worker != nullptr ? view.worker->segment : nullptr;
  request.overhead = view.state == CILKPROF_STATE_OVERHEAD;
  request.elided = ElidedRanges(&request.elided_count);
  request.probe_frameless_leaf = !synchronous;
  // Inside dlclose the loader edits its module list: no libunwind (docs/UNWINDER.md).
  request.allow_cfi = tls_in_loader == 0;
  request.keep_outermost = kKeepOutermost;
  request.max_walk = kMaxWalkFrames;
  // OpenMP (issue 17): a task other than the initial one runs above libomp's frames;
  // its creation context was recorded when it was created (unwinder/logical.h,
  // recorded paths; docs/OPENMP.md "Logical paths of tasks").
  if (request.segment == nullptr && AttachedRuntime() == ompt::OmptRuntimeView()) {
    request.recorded = ompt::CurrentTaskPath();
    if (request.recorded != nullptr) {
      request.boundary = ompt::BoundaryRanges(&request.boundary_count);
      request.callees = ompt::CalleeRanges(&request.callee_count);
    }
  }
  return unwinder::UnwindLogical(request, t->frames, kMaxFrames);
}

// Where the elided-frames node goes in the sample's path (cct.h), or kNoGap.
uint32_t GapOf(const unwinder::LogicalResult& r) { return r.elided > 0 ? r.gap : kNoGap; }

void CountDeepStack(SampleCounters* counters, const unwinder::LogicalResult& r) {
  if (r.elided == 0) return;
  CounterAdd(&counters->deep_stacks, 1);
  CounterAdd(&counters->deep_stack_frames_elided, r.elided);
  const uint64_t deepest = CounterRead(&counters->deepest_stack);
  if (r.walked > deepest) CounterAdd(&counters->deepest_stack, r.walked - deepest);
}

// The lock's leaf under the logical path of `context`, the path read as user code
// (whatever the worker's state: the lock call is the program's). kNoNode when full.
uint32_t LockLeaf(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode, uintptr_t lock,
                  bool synchronous, SampleCounters* counters, bool* partial) {
  WorkerView view = ReadWorker();
  view.state = CILKPROF_STATE_WORKING;
  const unwinder::LogicalResult r = Unwind(t, context, mode, view, synchronous);
  *partial = r.partial || r.truncated || r.depth == 0;
  uint32_t node = InsertPath(&t->cct, t->frames, r.depth, *partial, /*empty_is_root=*/false, GapOf(r));
  // A synchronous charge is unwound from the interposed call itself: when the program
  // reached it by a tail call, the function that made it is not on the stack any more
  // (locks/tail_call.h) and goes back in as the innermost frame.
  const uintptr_t tail_caller = synchronous && r.depth > 0 ? locks::TailCaller(t->frames[0].pc + 1) : 0;
  if (node != kNoNode && tail_caller != 0) {
    node = t->cct.FindOrInsertChild(node, tail_caller, NodeKind::kPc, static_cast<uint8_t>(unwinder::Edge::kCall));
  }
  if (node != kNoNode) node = t->cct.FindOrInsertChild(node, lock, NodeKind::kLock, 0);
  if (node == kNoNode) {
    CounterAdd(&counters->dropped_no_memory, 1);
  } else {
    CountDeepStack(counters, r);
  }
  return node;
}

}  // namespace

void ChargeLock(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode, uintptr_t lock,
                MetricId metric, uint64_t amount) {
  bool partial = false;
  const uint32_t node = LockLeaf(t, context, mode, lock, /*synchronous=*/true, &t->counters, &partial);
  if (node != kNoNode) t->cct.AddMetric(node, metric, amount);
}

namespace {

// What a sample was, for the timeline (issue 16): the scheduler state and the CCT node
// it was charged to (0: none, e.g. an idle sample, which the tree does not hold).
struct SampleOutcome {
  timeline::State state = timeline::State::kUnknown;
  uint32_t node = 0;
  uint32_t worker_id_plus_1 = 0;
};

timeline::State TimelineState(uint32_t worker_state) {
  switch (worker_state) {
    case CILKPROF_STATE_WORKING:
      return timeline::State::kWorking;
    case CILKPROF_STATE_IDLE:
      return timeline::State::kIdle;
    case CILKPROF_STATE_OVERHEAD:
      return timeline::State::kOverhead;
    default:
      return timeline::State::kNotAWorker;
  }
}

SampleOutcome Charge(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode, uint64_t weight,
                     bool synchronous) {
  SampleOutcome outcome;
  SampleCounters* counters = &t->counters;
  const uintptr_t waiting = __atomic_load_n(&t->waiting_lock, __ATOMIC_RELAXED);
  if (waiting != 0 && g_state->config.clock == ClockKind::kCpu) {
    // Waiting for a lock with the CPU clock: the thread runs only the lock's own code
    // (the agent's registration, libc's futex wait, a spin), and the interposed call
    // measures the whole wait, which its clock charges at the lock call, unwound from
    // there (locks/lock_accounting.h). Unwound from this signal's context instead, up to
    // 3% of lock_contention's lock_wait landed at the enclosing spawn site (the physical
    // walk out of those windows came out empty). So the sample leaves no trace: its
    // weight is in the measured wait already. Never work, idleness or overhead.
    outcome.state = timeline::State::kLockWait;
    return outcome;
  }
  if (waiting != 0) {
    // Waiting for a lock (issue 14), sampled with the wall clock: lock_wait, never work,
    // idleness or overhead. The waits the interposed call measures then go to the exact
    // counters only (lock_clock.h).
    bool partial = false;
    const uint32_t node = LockLeaf(t, context, mode, waiting, synchronous, counters, &partial);
    outcome.state = timeline::State::kLockWait;
    outcome.node = node;
    if (node == kNoNode) return outcome;
    t->cct.AddMetric(node, kMetricSamples, 1);
    t->cct.AddMetric(node, kMetricLockWait, weight);
    CounterAdd(&counters->samples, 1);
    if (partial) CounterAdd(&counters->partial_unwinds, 1);
    CounterAdd(&counters->cpu_ns, weight);
    return outcome;
  }
  WorkerView view = ReadWorker();
  // OpenMP (issue 17): a working thread interrupted in libomp's own code does the
  // runtime's bookkeeping for its task (allocation, queueing, dispatch): overhead
  // (docs/OPENMP.md, "States, idleness and overhead").
  if (view.state == CILKPROF_STATE_WORKING &&
      ompt::IsOmptOverheadPc(AttachedRuntime(), static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]))) {
    view.state = CILKPROF_STATE_OVERHEAD;
  }
  outcome.state = TimelineState(view.state);
  if (view.worker != nullptr) outcome.worker_id_plus_1 = view.worker->worker_id + 1;
  // In the tool: its hooks and API (the depth), the runtime's tool-only paths (the
  // worker's mark), or the tool's code outside both (the interrupted pc).
  const bool in_tool = InInstrumentation() || view.tool_path ||
                       InToolCode(static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]));
  const SampleKind kind = ClassifySample(view.state, in_tool);
  if (kind == SampleKind::kIdle) {
    CounterAdd(&counters->idle_samples, 1);
    CounterAdd(&counters->idle_ns, weight);
    return outcome;
  }
  const unwinder::LogicalResult r = Unwind(t, context, mode, view, synchronous);
  const bool overhead = kind == SampleKind::kOverhead;
  const bool unattributed = overhead && r.unattributed;
  const bool partial = !unattributed && (r.partial || r.truncated || r.depth == 0);
  const uint32_t node = InsertPath(&t->cct, t->frames, r.depth, partial, unattributed, GapOf(r));
  outcome.node = node;
  if (node == kNoNode) {
    CounterAdd(&counters->dropped_no_memory, 1);
    return outcome;
  }
  t->cct.AddMetric(node, kMetricSamples, 1);
  if (kind == SampleKind::kInstrumentation) {
    t->cct.AddMetric(node, kMetricInstrumentation, weight);
  } else {
    t->cct.AddMetric(node, overhead ? kMetricOverhead : kMetricWork, weight);
  }
  if (kind != SampleKind::kInstrumentation && view.worker != nullptr && view.working > 0 &&
      view.workers > view.working) {
    t->cct.AddMetric(node, kMetricIdleness, weight * (view.workers - view.working) / view.working);
  }
  CounterAdd(&counters->samples, 1);
  if (partial) CounterAdd(&counters->partial_unwinds, 1);
  CountDeepStack(counters, r);
  CounterAdd(&counters->cpu_ns, weight);
  if (overhead) CounterAdd(&counters->overhead_samples, 1);
  if (unattributed) CounterAdd(&counters->unattributed_overhead, 1);
  return outcome;
}

}  // namespace

void TakeSample(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode, uint64_t weight,
                bool synchronous) {
  const SampleOutcome outcome = Charge(t, context, mode, weight, synchronous);
  // After the charge, and whatever it was: the timeline never changes a metric.
  timeline::RecordSample(t->timeline, outcome.state, outcome.node == kNoNode ? 0 : outcome.node,
                         outcome.worker_id_plus_1);
}

void TakeProbe(ThreadRecord* t, const ucontext_t* context, unwinder::Mode mode) {
  WorkerView view = ReadWorker();
  view.state = CILKPROF_STATE_WORKING;  // the probe is user code by definition
  const unwinder::LogicalResult r = Unwind(t, context, mode, view, /*synchronous=*/true);
  const bool partial = r.partial || r.truncated || r.depth == 0;
  const uint32_t node = InsertPath(&t->cct, t->frames, r.depth, partial, /*empty_is_root=*/false, GapOf(r));
  if (node == kNoNode) {
    CounterAdd(&t->counters.dropped_no_memory, 1);
    return;
  }
  t->cct.AddMetric(node, kMetricProbe, 1);
  CounterAdd(&t->counters.probe_samples, 1);
  if (partial) CounterAdd(&t->counters.probe_partial, 1);
}

}  // namespace cilkprof::agent
