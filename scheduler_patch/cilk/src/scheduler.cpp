// Spawn, sync and steal: continuation stealing on fibers (contexts in Boost.Context's
// fcontext format, switched by context_switch.hpp).
//
// spawn: the parent strand P (on stack S) takes a fiber F from its worker's cache,
//   saves its context in a Continuation (in cilk_rt_spawn's frame on S) and calls
//   the child's entry frame, cilk_invoke_child, on F (SpawnSwitch). The child's first
//   act, once it has its own copy of the callable, is to push the continuation on its
//   worker's deque (PublishParent). Thieves take the oldest continuation of a
//   victim's deque, so the parent, not the child, is what moves (work-first, as in
//   Cilk-5).
// child end (EndChild): pop the deque. Got P back: return to it through the call
//   SpawnSwitch made; P recycles F. Empty: P was stolen; count the child out of P's
//   scope and, if P is parked at its sync and this was the last child, resume P
//   here; otherwise go to the scheduler (LeaveEndedChild). F's frames are then left
//   for good and the receiver recycles it.
// sync: if a child of the scope is still out (join != 1), park the strand in the
//   scope and go to the scheduler.
// The scheduler of a worker runs on the thread's own stack (pool threads) or on a
// fiber (worker 0, the entering thread, whose own stack holds the root strand).
#include <boost/context/detail/fcontext.hpp>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "context_switch.hpp"
#include "runtime.hpp"

namespace cilk::rt {
namespace {

namespace bctx = boost::context::detail;

constexpr int kSpinRounds = 64;
constexpr int kYieldRounds = 32;
constexpr int kPausesPerRound = 32;

// Switches to `fctx` (running on `to`), handing it `message`. Returns what the
// context that later switches back here hands us. `dying`: this context never
// runs again.
inline cilk::detail::transfer SwitchTo(void* fctx, const Stack* to, void* message, bool dying) {
  sanitizer::SwitchState state;
  sanitizer::StartSwitch(&state, dying, to->segment.stack_lo, to->segment.stack_hi);
  sanitizer::SwitchTsanFiber(to->tsan_fiber);
  const bctx::transfer_t t = JumpFcontext(fctx, message);
  sanitizer::FinishSwitch(&state);
  return cilk::detail::transfer{t.fctx, t.data};
}

inline bool ForceSteal(const Runtime& rt) {
  return rt.force_steal && !rt.stop.load(std::memory_order_relaxed);
}

// A child ended on message.fiber and left it with a switch: the frames it left
// there never return. Forget them (sanitizers) and put the fiber in the cache. The
// whole stack: nothing on it is live, and the switch's own frames lie below any mark
// the child could take before calling it (SwitchTo is not always inlined: ASan then
// reported a later frame at that depth writing into the old switch's redzones).
void RecycleAbandoned(Runtime& rt, Worker* worker, const Message& message) {
  Fiber* fiber = message.fiber;
  sanitizer::ForgetFrames(fiber->stack.segment.stack_lo, fiber->stack.segment.stack_hi);
  sanitizer::RenewTsanFiber(&fiber->stack.tsan_fiber);
  rt.stacks.Release(&worker->cache, fiber);
}

// A strand got control back after a switch it made. Returns the worker it now runs on.
inline Worker* OnStrandResumed(cilk::detail::transfer from) {
  Worker* worker = CurrentWorker();
  const Message* message = static_cast<const Message*>(from.data);
  switch (message->kind) {
    case MessageKind::kFromScheduler:
      worker->sched_fctx = from.fctx;
      break;
    case MessageKind::kFreeFiber:
      RecycleAbandoned(*g_runtime, worker, *message);
      break;
    default:
      Fatal("cilk: internal error: a strand was resumed with a scheduler's message.\n");
  }
  return worker;
}

inline void RunStrandOn(Worker* worker, Stack* stack) {
  worker->record.segment = &stack->segment;
  SetState(worker, CILKPROF_STATE_WORKING);
}

void RecordError(ScopeState* scope, std::exception_ptr& error) {
  if (scope->core.error_claimed.exchange(1, std::memory_order_acq_rel) == 0) {
    ::new (static_cast<void*>(scope->error)) std::exception_ptr(std::move(error));
  }
  error = nullptr;
}

uint64_t NextRandom(Worker* worker) {
  uint64_t x = worker->rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  worker->rng = x;
  return x;
}

struct Target {
  void* fctx = nullptr;
  Stack* stack = nullptr;
};

Continuation* TakeForced(Runtime& rt, Worker* self) {
  if (rt.forced_count.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> guard(rt.forced_mutex);
  for (Continuation** link = &rt.forced_head; *link != nullptr; link = &(*link)->next_forced) {
    Continuation* c = *link;
    if (c->child_worker != self->record.worker_id) {
      *link = c->next_forced;
      rt.forced_count.fetch_sub(1, std::memory_order_relaxed);
      return c;
    }
  }
  return nullptr;
}

void PostForced(Runtime& rt, Continuation* c, uint32_t child_worker) {
  c->child_worker = child_worker;
  {
    std::lock_guard<std::mutex> guard(rt.forced_mutex);
    c->next_forced = nullptr;
    Continuation** link = &rt.forced_head;
    while (*link != nullptr) link = &(*link)->next_forced;
    *link = c;
    rt.forced_count.fetch_add(1, std::memory_order_release);
  }
  rt.idle.WakeAll();  // the one woken must not be the poster: wake everyone
}

bool TrySteal(Runtime& rt, Worker* self, Target* target, uint32_t* victim_out) {
  const uint32_t n = rt.nworkers;
  if (n < 2) return false;
  // A random victim other than ourselves, then the others in order.
  uint32_t victim = static_cast<uint32_t>(NextRandom(self) % (n - 1));
  if (victim >= self->record.worker_id) ++victim;
  for (uint32_t tries = 0; tries < n - 1; ++tries) {
    Worker* w = rt.workers[victim];
    Continuation* c = w->deque.Steal([](Continuation* stolen) {
      // Under the victim's lock: the child's failing pop will see this count.
      stolen->scope->core.join.fetch_add(1, std::memory_order_relaxed);
    });
    if (c != nullptr) {
      *target = Target{c->fctx, c->stack};
      *victim_out = victim;
      return true;
    }
    if (++victim == n) victim = 0;
    if (victim == self->record.worker_id && ++victim == n) victim = 0;
  }
  return false;
}

bool AnyWorkVisible(Runtime& rt, Worker* self) {
  if (rt.forced_count.load(std::memory_order_seq_cst) != 0) return true;
  if (self->record.worker_id == 0 && rt.root_handoff.load(std::memory_order_seq_cst) != nullptr) return true;
  for (Worker* w : rt.workers) {
    if (w != self && w->deque.MaybeNonEmpty()) return true;
  }
  return false;
}

// One look for work: the root strand coming home (worker 0), a forced
// continuation, a steal.
bool TryFindWork(Runtime& rt, Worker* self, Target* target) {
  if (self->record.worker_id == 0) {
    if (void* fctx = rt.root_handoff.exchange(nullptr, std::memory_order_acq_rel); fctx != nullptr) {
      *target = Target{fctx, &rt.root_stack};
      return true;
    }
  }
  if (Continuation* c = TakeForced(rt, self); c != nullptr) {
    // Adopt the ancestors that travelled with it (our deque is empty here).
    for (Continuation* a = c->ancestors; a != nullptr;) {
      Continuation* next = a->next_ancestor;
      self->deque.Push(a);
      a = next;
    }
    c->ancestors = nullptr;
    if (self->deque.MaybeNonEmpty()) rt.idle.NotifyWorkStrict();
    *target = Target{c->fctx, c->stack};
    // A forced hand-off is a steal from the worker that posted it (timeline tools).
    CILKPROF_EVENT(Events(), steal, self->record.worker_id, c->child_worker);
    return true;
  }
  uint32_t victim = 0;
  if (TrySteal(rt, self, target, &victim)) {
    if (rt.idle.sleepers() > 0) rt.idle.NotifyWorkRelaxed();  // work is about: wake a helper
    CILKPROF_EVENT(Events(), steal, self->record.worker_id, victim);
    return true;
  }
  return false;
}

// Looks for work, spinning, then yielding, then sleeping. False only when the
// runtime stops (never for worker 0, whose scheduler fiber must not return).
bool FindWork(Runtime& rt, Worker* self, Target* target) {
  for (;;) {
    for (int round = 0; round < kSpinRounds + kYieldRounds; ++round) {
      if (TryFindWork(rt, self, target)) return true;
      if (self->record.worker_id != 0 && rt.stop.load(std::memory_order_relaxed)) return false;
      if (round < kSpinRounds) {
        for (int i = 0; i < kPausesPerRound; ++i) CpuRelax();
      } else {
        sched_yield();
      }
    }
    const uint32_t epoch = rt.idle.PrepareSleep();
    if (AnyWorkVisible(rt, self) || (self->record.worker_id != 0 && rt.stop.load(std::memory_order_seq_cst))) {
      rt.idle.CancelSleep();
      continue;
    }
    rt.idle.Sleep(epoch, /*timed=*/rt.active_roots.load(std::memory_order_relaxed) > 0);
  }
}

// A scheduler got control back from a strand of its worker. Returns a strand to
// resume at once (a parked parent whose children all ended meanwhile), or none.
Target HandleSchedulerMessage(Runtime& rt, Worker* self, cilk::detail::transfer from) {
  const Message* message = static_cast<const Message*>(from.data);
  switch (message->kind) {
    case MessageKind::kFreeFiber:
      RecycleAbandoned(rt, self, *message);
      return {};
    case MessageKind::kParkAtSync: {
      ScopeState* scope = message->scope;
      scope->resume_fctx = from.fctx;
      scope->resume_stack = message->stack;
      if (scope->core.join.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        scope->core.join.store(1, std::memory_order_relaxed);  // every child ended meanwhile
        return Target{scope->resume_fctx, scope->resume_stack};
      }
      return {};
    }
    case MessageKind::kReturnToOrigin:
      rt.root_handoff.store(from.fctx, std::memory_order_seq_cst);
      rt.idle.WakeAll();
      return {};
    case MessageKind::kFromScheduler:
      break;
  }
  Fatal("cilk: internal error: a scheduler received a strand's message.\n");
}

void RunFromScheduler(Runtime& rt, Worker* self, Target target) {
  Message go{MessageKind::kFromScheduler};
  if (target.fctx != nullptr) rt.entry_fp.Install();  // fp_control.hpp
  while (target.fctx != nullptr) {
    SetBusy(self, CILKPROF_STATE_OVERHEAD);
    // The profiler: during the switch, `segment` names the stack being entered.
    self->record.segment = &target.stack->segment;
    const cilk::detail::transfer back = SwitchTo(target.fctx, target.stack, &go, /*dying=*/false);
    SetState(self, CILKPROF_STATE_OVERHEAD);
    self->record.segment = nullptr;
    target = HandleSchedulerMessage(rt, self, back);
  }
}

void SchedulerLoop(Runtime& rt, Worker* self) {
  for (;;) {
    SetIdle(self);
    Target target;
    if (!FindWork(rt, self, &target)) return;
    RunFromScheduler(rt, self, target);
  }
}

// Worker 0's scheduler fiber: first entered when a strand of worker 0 leaves for
// its scheduler. Never returns.
void SchedulerFiberMain(bctx::transfer_t from) {
  sanitizer::FinishSwitch(nullptr);
  Runtime& rt = *g_runtime;
  Worker* self = CurrentWorker();
  SetState(self, CILKPROF_STATE_OVERHEAD);
  self->record.segment = nullptr;
  RunFromScheduler(rt, self, HandleSchedulerMessage(rt, self, cilk::detail::transfer{from.fctx, from.data}));
  SchedulerLoop(rt, self);
  Fatal("cilk: internal error: worker 0's scheduler returned.\n");
}

// The root strand, wherever it runs now, continues on the thread that entered.
void ReturnToOrigin() {
  Worker* worker = CurrentWorker();
  if (worker->record.worker_id == 0) return;
  SetState(worker, CILKPROF_STATE_OVERHEAD);
  Message message{MessageKind::kReturnToOrigin};
  worker = OnStrandResumed(SwitchTo(worker->sched_fctx, worker->sched_stack, &message, false));
  RunStrandOn(worker, &g_runtime->root_stack);
}

void UnbindRoot() {
  Runtime& rt = *g_runtime;
  Worker* worker = CurrentWorker();
  SetIdle(worker, CILKPROF_STATE_NOT_A_WORKER);
  worker->record.segment = nullptr;
  tls_worker = nullptr;
  cilk::detail::tls_inline_scopes = false;
  const int roots_before = rt.active_roots.fetch_sub(1, std::memory_order_seq_cst);
  ApplyHooksAtRootEnd(rt, roots_before);  // a hooks change that waited for this root
  rt.entry_mutex.unlock();
}

// A child whose parent was stolen (or handed off under CILK_FORCE_STEAL) has ended
// on `fiber`: leave the fiber for good. If the parent waits at its sync for this
// last child, resume it here; else go to the scheduler. Either receiver recycles
// the fiber, whose frames never return.
[[noreturn, gnu::noinline]] void LeaveEndedChild(Worker* worker, Fiber* fiber, bool parent_stolen) {
  ScopeState* scope = fiber->scope;
  Message message{MessageKind::kFreeFiber, fiber};
  if (parent_stolen && scope->core.join.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The parent is parked at its sync and this was its last child.
    scope->core.join.store(1, std::memory_order_relaxed);
    SwitchTo(scope->resume_fctx, scope->resume_stack, &message, /*dying=*/true);
  } else {
    SwitchTo(worker->sched_fctx, worker->sched_stack, &message, /*dying=*/true);
  }
  Fatal("cilk: internal error: a finished child's fiber was resumed.\n");
}

// A child's code has returned on `fiber` (its worker, the caller's, is in state
// OVERHEAD). Returns if its parent was not stolen (the deque's newest entry): the
// caller then returns to the parent through SpawnSwitch. Else the parent was
// stolen: count the child out of the parent's scope and leave the fiber.
void EndChild(Worker* worker, Fiber* fiber) {
  CILKPROF_HOOK(g_hooks, child_end, &fiber->scope->tool);
  Continuation* parent = worker->deque.Pop();
  if (parent == nullptr) LeaveEndedChild(worker, fiber, /*parent_stolen=*/true);
  if (parent != fiber->parent) Fatal("cilk: internal error: the deque's newest entry is not the parent.\n");
  Runtime& runtime = *g_runtime;
  if (!ForceSteal(runtime)) return;
  // CILK_FORCE_STEAL: hand the parent, with the older entries of this deque, to
  // another worker.
  Continuation** link = &parent->ancestors;
  worker->deque.DrainOldestFirst([&link](Continuation* older) {
    *link = older;
    link = &older->next_ancestor;
  });
  *link = nullptr;
  PostForced(runtime, parent, worker->record.worker_id);
  LeaveEndedChild(worker, fiber, /*parent_stolen=*/false);
}

std::exception_ptr SyncChildren(ScopeState* scope, const void* callsite) {
  CILKPROF_HOOK(g_hooks, sync_begin, &scope->tool, callsite);
  if (scope->core.join.load(std::memory_order_acquire) != 1) {
    Worker* worker = CurrentWorker();
    SetState(worker, CILKPROF_STATE_OVERHEAD);
    CILKPROF_EVENT(Events(), sync_wait_begin, worker->record.worker_id);
    Stack* stack = StackOf(worker->record.segment);
    Message message{MessageKind::kParkAtSync, nullptr, scope, stack};
    worker = OnStrandResumed(SwitchTo(worker->sched_fctx, worker->sched_stack, &message, false));
    CILKPROF_EVENT(Events(), sync_wait_end, worker->record.worker_id);
    RunStrandOn(worker, stack);
  }
  CILKPROF_HOOK(g_hooks, sync_end, &scope->tool);
  std::exception_ptr error;
  if (scope->core.error_claimed.load(std::memory_order_relaxed) != 0) {
    error = std::move(*scope->Error());
    scope->Error()->~exception_ptr();
    scope->core.error_claimed.store(0, std::memory_order_relaxed);
  }
  return error;
}

// The runtime's tool-only paths, marked for the profiler (cilkprof_worker_t::
// tool_path): with no tool attached, a scope that is not a computation's root is
// entered, synced and left inline; with one, those go through scope_enter, scope_sync
// and scope_leave so that the hooks run. The library part of that is the tool's cost,
// and a sampler must not charge it to the program as work (docs/WORKSPAN.md,
// "Instrumentation and the sampled profile"). What stays unmarked: entering a root
// scope (off a worker), and a sync or leave of a root scope or with a child out or an
// exception recorded (the runtime's own work, tool or not, which may park the strand
// and resume it on another worker, rethrow, or return to the origin).
//
// The mark goes up first thing, before the loads that decide (samples land there:
// after the call into the library the first instructions take the instruction-cache
// misses the tool's code caused), in an entry point with no frame that tail-calls its
// body; the body takes the mark down again at once when the path is not the tool's,
// and always on the worker that raised it, before anything that may switch.
inline Worker* RaiseToolPath() {
  Worker* worker = CurrentWorker();
  if (worker == nullptr || g_hooks == nullptr) return nullptr;
  worker->record.tool_path = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);  // the reader is this thread's signal handler
  return worker;
}

// Owns a raised mark (RaiseToolPath's worker, or null) and takes it down.
class ToolPathMark {
 public:
  explicit ToolPathMark(Worker* raised) : worker_(raised) {}
  ~ToolPathMark() { Clear(); }
  void Clear() {
    if (worker_ == nullptr) return;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    worker_->record.tool_path = 0;
    worker_ = nullptr;
  }
  ToolPathMark(const ToolPathMark&) = delete;
  ToolPathMark& operator=(const ToolPathMark&) = delete;

 private:
  Worker* worker_;
};

// A sync or leave of `scope` on the tool's path: a scope the library entered only for
// a tool (kScopeSlow without kScopeRoot: scope_enter makes a scope slow on a worker
// only when a tool is attached; inline scopes have flags 0), with nothing to wait for
// (join == 1: no stolen child out, and none can be stolen later, since the strand at
// its sync spawns no more; so no park) and nothing to rethrow.
inline bool ToolOnlySync(ScopeState* scope) {
  return (scope->core.flags & (kScopeSlow | kScopeRoot)) == kScopeSlow &&
         scope->core.join.load(std::memory_order_acquire) == 1 &&
         scope->core.error_claimed.load(std::memory_order_relaxed) == 0;
}

[[gnu::noinline]] void ScopeEnter(cilk::detail::scope_state* opaque, const void* callsite, const void* caller, Worker* raised) {
  // Raised on a worker: the scope came here instead of inline only because a tool is
  // attached (tls_inline_scopes is false). Off a worker, it binds a root: no mark.
  const ToolPathMark tool_path(raised);
  ScopeState* scope = ::new (static_cast<void*>(opaque)) ScopeState();
  scope->core.join.store(1, std::memory_order_relaxed);
  scope->core.flags = kScopeSlow;
  if (CurrentWorker() == nullptr) BindRoot(scope);
  CILKPROF_HOOK(g_hooks, scope_enter, &scope->tool, callsite, caller);
}

[[gnu::noinline]] void ScopeSync(ScopeState* scope, const void* callsite, Worker* raised) {
  ToolPathMark tool_path(raised);
  if (!ToolOnlySync(scope)) tool_path.Clear();
  std::exception_ptr error = SyncChildren(scope, callsite);
  if ((scope->core.flags & kScopeRoot) != 0) ReturnToOrigin();
  if (error) std::rethrow_exception(std::move(error));
}

[[gnu::noinline]] void ScopeLeave(ScopeState* scope, const void* callsite, Worker* raised) {
  ToolPathMark tool_path(raised);
  if (!ToolOnlySync(scope)) tool_path.Clear();
  std::exception_ptr error = SyncChildren(scope, callsite);
  CILKPROF_HOOK(g_hooks, scope_exit, &scope->tool);
  const bool root = (scope->core.flags & kScopeRoot) != 0;
  // Leaving by an exception already (the destructor runs during unwinding): the
  // child's exception is dropped, since throwing it would call std::terminate.
  const bool unwinding = error && std::uncaught_exceptions() > 0;
  if (root) {
    ReturnToOrigin();
    UnbindRoot();
  }
  if (error && !unwinding) std::rethrow_exception(std::move(error));
}

}  // namespace

void WorkerThreadMain(Worker* worker) {
  tls_worker = worker;
  RegisterPoolWorker(worker);  // tls_inline_scopes, now and after a change of hooks
  EnsureAltSignalStack();
  NativeStackBounds(&worker->native_stack.segment.stack_lo, &worker->native_stack.segment.stack_hi);
  worker->native_stack.tsan_fiber = sanitizer::CurrentTsanFiber();
  worker->sched_stack = &worker->native_stack;
  SchedulerLoop(*g_runtime, worker);
  SetIdle(worker, CILKPROF_STATE_NOT_A_WORKER);
}

void BindRoot(ScopeState* scope) {
  Runtime& rt = StartRuntime();
  rt.entry_mutex.lock();
  Worker* worker = rt.workers[0];
  tls_worker = worker;
  EnsureAltSignalStack();

  // The root segment: this thread's stack, computed once per thread.
  thread_local uintptr_t native_lo = 0, native_hi = 0;
  if (native_hi == 0) NativeStackBounds(&native_lo, &native_hi);
  rt.root_stack.segment = cilkprof_segment_t{};
  rt.root_stack.segment.stack_lo = native_lo;
  rt.root_stack.segment.stack_hi = native_hi;
  rt.root_stack.tsan_fiber = sanitizer::CurrentTsanFiber();

  if (worker->sched_fiber == nullptr) {
    worker->sched_fiber = rt.stacks.Allocate(nullptr);
    worker->sched_stack = &worker->sched_fiber->stack;
    const Stack& s = worker->sched_fiber->stack;
    // A pooled fiber may hold redzones of frames a child left there: the new context replaces them.
    sanitizer::ForgetFrames(s.segment.stack_lo, s.segment.stack_hi);
    worker->sched_fctx = bctx::make_fcontext(reinterpret_cast<void*>(s.segment.stack_hi),
                                             s.segment.stack_hi - s.segment.stack_lo, &SchedulerFiberMain);
  }
  rt.entry_fp.Capture();
  rt.active_roots.fetch_add(1, std::memory_order_seq_cst);
  ApplyHooksAtRootBegin(rt);  // a hooks change waiting for a moment with no root: now
  cilk::detail::tls_inline_scopes = g_hooks == nullptr;
  scope->core.flags |= kScopeRoot;
  worker->record.segment = &rt.root_stack.segment;
  SetBusy(worker, CILKPROF_STATE_WORKING);
}

}  // namespace cilk::rt

using cilk::rt::AsScope;
using cilk::rt::CurrentWorker;
using cilk::rt::g_hooks;
using cilk::rt::g_runtime;

namespace cilk::detail {

// The entry points: raise the mark, then the body (a tail call, so no frame of their
// own and the mark's store among the first instructions).
void scope_enter(scope_state* opaque, const void* caller) {
  rt::Worker* raised = rt::RaiseToolPath();
  rt::ScopeEnter(opaque, __builtin_return_address(0), caller, raised);
}

void scope_sync(scope_state* opaque) {
  rt::Worker* raised = rt::RaiseToolPath();
  rt::ScopeSync(AsScope(opaque), __builtin_return_address(0), raised);
}

void scope_leave(scope_state* opaque) {
  rt::Worker* raised = rt::RaiseToolPath();
  rt::ScopeLeave(AsScope(opaque), __builtin_return_address(0), raised);
}

void child_exception(void* child) noexcept {
  std::exception_ptr error = std::current_exception();
  rt::RecordError(static_cast<rt::Fiber*>(child)->scope, error);
}

}  // namespace cilk::detail

namespace {

// Copies a callable of `words` (<= 8, kCopiedAsWords) machine words. Spelled out so
// that the compiler cannot turn it into a call to memcpy: that call costs more than
// the copy, and its frame would sit above the entry frame, where the profiler takes
// it for the child's code.
inline void CopyWords(void* to, const void* from, std::size_t words) {
  auto* d = static_cast<uintptr_t*>(to);
  const auto* s = static_cast<const uintptr_t*>(from);
  switch (words) {
    case 8: d[7] = s[7]; [[fallthrough]];
    case 7: d[6] = s[6]; [[fallthrough]];
    case 6: d[5] = s[5]; [[fallthrough]];
    case 5: d[4] = s[4]; [[fallthrough]];
    case 4: d[3] = s[3]; [[fallthrough]];
    case 3: d[2] = s[2]; [[fallthrough]];
    case 2: d[1] = s[1]; [[fallthrough]];
    case 1: d[0] = s[0]; [[fallthrough]];
    default: break;
  }
}

}  // namespace

// The runtime's entry frame at the bottom of every child's fiber, called by
// SpawnSwitch (under the hidden alias cilk_rt_child_entry): copies the callable into
// its own frame, publishes the parent's continuation, runs the child, records what
// it threw, destroys the copy, ends the child. It returns only to a parent that was
// not stolen. It and cilk_rt_fiber_bottom (spawn_shim.S), its caller, fill the
// section cilk_trampoline_text, whose bounds are every child segment's entry range:
// the child's code sits directly above it, so a logical unwinder stops at the first
// frame whose pc is inside it. The worker is in state WORKING exactly while the
// child's code runs.
// Its arguments come in registers from the spawn: the callable (in the spawning
// frame, which a thief may end once the parent is published), how to copy and
// destroy it, how to call it, and the child's fiber.
extern "C" __attribute__((noinline, section("cilk_trampoline_text"), visibility("default"))) void cilk_invoke_child(
    void* closure, const cilk::detail::child_ops* ops, cilk::detail::child_function call, cilk::rt::Fiber* fiber) {
  namespace rt = cilk::rt;
  rt::sanitizer::FinishSwitch(nullptr);  // the first code on this stack
  // The child's own copy of the callable: in this frame (the common case), or on
  // the heap when it is large or over-aligned. Not a dynamic alloca: an alloca in a
  // frame that a stolen child's fiber abandons left ASan redzones behind.
  alignas(16) unsigned char small[128];
  const std::size_t size = ops->size;
  const std::size_t alignment = ops->alignment;
  void* heap = nullptr;
  void* callable = small;
  bool constructed = true;
  if (__builtin_expect(size > sizeof(small) || alignment > 16, 0)) {
    try {
      heap = ::operator new(size, std::align_val_t(alignment));
      callable = heap;
    } catch (...) {
      cilk::detail::child_exception(fiber);
      constructed = false;
    }
  }
  if (!constructed) {
    // No memory for the copy: the child does not run; its sync rethrows.
  } else if (__builtin_expect(ops->construct == nullptr, 1)) {
    CopyWords(callable, closure, size / sizeof(uintptr_t));
  } else {
    constructed = ops->construct(callable, closure, fiber);
  }
  // The parent may resume elsewhere from here on, ending the closure with its frame.
  rt::Worker* worker = CurrentWorker();
  rt::PublishParent(worker, fiber);
  if (constructed) {
    rt::SetState(worker, CILKPROF_STATE_WORKING);
    try {
      call(callable);
    } catch (...) {
      cilk::detail::child_exception(fiber);
    }
    rt::SetState(CurrentWorker(), CILKPROF_STATE_OVERHEAD);  // the child may have moved
    if (ops->destroy != nullptr) ops->destroy(callable, fiber);
  }
  if (heap != nullptr) ::operator delete(heap, std::align_val_t(alignment));
  rt::EndChild(CurrentWorker(), fiber);
}

extern "C" void cilk_rt_child_entry(void* closure, const cilk::detail::child_ops* ops, cilk::detail::child_function call,
                                    cilk::rt::Fiber* fiber) __attribute__((alias("cilk_invoke_child"), visibility("hidden")));

namespace {

// The shim has just stored the registers one 8-byte word at a time. A plain struct
// copy is compiled to 16-byte loads, each spanning two of those stores, which the
// CPU cannot forward from its store buffer: every one stalls until the stores
// retire. Word-sized loads are forwarded at once.
inline void CopySpawnPoint(cilkprof_saved_regs_t* to, const cilkprof_saved_regs_t* from) {
  constexpr std::size_t kWords = sizeof(cilkprof_saved_regs_t) / sizeof(uintptr_t);
  static_assert(sizeof(cilkprof_saved_regs_t) == kWords * sizeof(uintptr_t));
  const volatile uintptr_t* source = reinterpret_cast<const volatile uintptr_t*>(from);
  uintptr_t* target = reinterpret_cast<uintptr_t*>(to);
  for (std::size_t i = 0; i < kWords; ++i) target[i] = source[i];
}

}  // namespace

// Jumped to by cilk_spawn_shim, which left the spawn point's registers in the
// segment of the head of the worker's fiber cache (or in worker->spawn_point);
// returns to the spawner. The fast path: that fiber taken from the cache, its
// segment linked to the parent's, the child called on it (SpawnSwitch); the child's
// return brings control back here when the parent was not stolen.
// The shim also passes what it looked up: the calling worker and the head of its
// fiber cache (null if empty).
extern "C" CILK_HIDDEN void cilk_rt_spawn(cilk::detail::scope_state* opaque, const cilk::detail::child_ops* ops,
                                          void* closure, cilk::detail::child_function call, cilk::rt::Worker* worker,
                                          cilk::rt::Fiber* fiber) {
  namespace rt = cilk::rt;
  rt::ScopeState* scope = AsScope(opaque);
  rt::SetState(worker, CILKPROF_STATE_OVERHEAD);
  const cilkprof_segment_t* parent_segment = worker->record.segment;
  if (__builtin_expect(fiber != nullptr, 1)) {
    g_runtime->stacks.Allocate(&worker->cache);  // takes `fiber`: the shim wrote the spawn point in it
  } else {
    fiber = g_runtime->stacks.Allocate(&worker->cache);
    CopySpawnPoint(&fiber->stack.segment.spawn, &worker->spawn_point);
  }
  cilkprof_segment_t& segment = fiber->stack.segment;  // stack and entry bounds are set already
  segment.parent = parent_segment;
  CILKPROF_HOOK(g_hooks, spawn, &scope->tool, reinterpret_cast<const void*>(segment.spawn.pc),
                reinterpret_cast<const void*>(call));

  rt::Continuation continuation;  // fctx: saved by SpawnSwitch; the hand-off fields: see Continuation
  continuation.stack = rt::StackOf(parent_segment);
  continuation.scope = scope;
  fiber->scope = scope;
  fiber->parent = &continuation;  // what the child publishes (PublishParent)
  // The profiler: during the switch, `segment` names the stack being entered (the
  // child's), so an OVERHEAD sample there is charged to this spawn.
  worker->record.segment = &segment;
  rt::sanitizer::SwitchState switch_state;
  rt::sanitizer::StartSwitch(&switch_state, /*dying=*/false, segment.stack_lo, segment.stack_hi);
  rt::sanitizer::SwitchTsanFiber(fiber->stack.tsan_fiber);
  const boost::context::detail::transfer_t back =
      rt::SpawnSwitch(closure, const_cast<cilk::detail::child_ops*>(ops), reinterpret_cast<void*>(call), fiber,
                      &continuation.fctx, reinterpret_cast<void*>(segment.stack_hi));
  if (back.data == nullptr) {
    // The child ended on this worker and returned to us through its frames: the
    // fiber is free, and we are back on our stack (the sanitizers learn it now).
    const rt::Stack* ours = continuation.stack;
    rt::sanitizer::SwitchState child_state;
    rt::sanitizer::StartSwitch(&child_state, /*dying=*/true, ours->segment.stack_lo, ours->segment.stack_hi);
    rt::sanitizer::SwitchTsanFiber(ours->tsan_fiber);
    rt::sanitizer::FinishSwitch(&switch_state);
    g_runtime->stacks.Release(&worker->cache, fiber);
  } else {
    // Stolen: a thief's scheduler resumed us.
    rt::sanitizer::FinishSwitch(&switch_state);
    worker = rt::OnStrandResumed(cilk::detail::transfer{back.fctx, back.data});
  }
  rt::RunStrandOn(worker, continuation.stack);
  CILKPROF_HOOK(g_hooks, continuation, &scope->tool);
}
