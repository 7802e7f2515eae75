// Spawn, sync and steal: continuation stealing on Boost.Context fibers.
//
// spawn: the parent strand P (on stack S) takes a fresh fiber F and switches to it;
//   the child's first act (child_begin) stores P's context in a Continuation (in
//   the spawn call's frame on S) and pushes it on its worker's deque. Thieves take
//   the oldest continuation of a victim's deque, so the parent, not the child, is
//   what moves (work-first, as in Cilk-5).
// child end: pop the deque. Got P back: switch to it and let it recycle F. Empty:
//   P was stolen; count the child out of P's scope and, if P is parked at its sync
//   and this was the last child, resume P here; otherwise go to the scheduler.
// sync: if a child of the scope is still out (join != 1), park the strand in the
//   scope and go to the scheduler.
// The scheduler of a worker runs on the thread's own stack (pool threads) or on a
// fiber (worker 0, the entering thread, whose own stack holds the root strand).
#include <boost/context/detail/fcontext.hpp>
#include <sched.h>

#include <cstdlib>
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
  return rt.config.force_steal && rt.nworkers >= 2 && !rt.stop.load(std::memory_order_relaxed);
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
      message->fiber->fctx = from.fctx;  // its loop, waiting for the next child
      g_runtime->stacks.Release(&worker->cache, message->fiber);
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
  if (scope->error_claimed.exchange(1, std::memory_order_acq_rel) == 0) {
    scope->error = std::move(error);
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

bool TrySteal(Runtime& rt, Worker* self, Target* target) {
  const uint32_t n = rt.nworkers;
  if (n < 2) return false;
  // A random victim other than ourselves, then the others in order.
  uint32_t victim = static_cast<uint32_t>(NextRandom(self) % (n - 1));
  if (victim >= self->record.worker_id) ++victim;
  for (uint32_t tries = 0; tries < n - 1; ++tries) {
    Worker* w = rt.workers[victim];
    Continuation* c = w->deque.Steal([](Continuation* stolen) {
      // Under the victim's lock: the child's failing pop will see this count.
      stolen->scope->join.fetch_add(1, std::memory_order_relaxed);
    });
    if (c != nullptr) {
      *target = Target{c->fctx, c->stack};
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
    return true;
  }
  if (TrySteal(rt, self, target)) {
    if (rt.idle.sleepers() > 0) rt.idle.NotifyWorkRelaxed();  // work is about: wake a helper
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
      message->fiber->fctx = from.fctx;
      rt.stacks.Release(&self->cache, message->fiber);
      return {};
    case MessageKind::kParkAtSync: {
      ScopeState* scope = message->scope;
      scope->resume_fctx = from.fctx;
      scope->resume_stack = message->stack;
      if (scope->join.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        scope->join.store(1, std::memory_order_relaxed);  // every child ended meanwhile
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
  rt.active_roots.fetch_sub(1, std::memory_order_seq_cst);
  rt.entry_mutex.unlock();
}

// A child's function has returned on `fiber`: resume its parent if it was not
// stolen; else count the child out of the parent's scope and resume the parent if
// it waits at its sync for this last child; else go to the scheduler. Returns when
// a later spawn takes this fiber for its child, with that spawn's request.
cilk::detail::transfer EndChild(Fiber* fiber) {
  Runtime& runtime = *g_runtime;
  Worker* worker = CurrentWorker();
  SetState(worker, CILKPROF_STATE_OVERHEAD);
  ScopeState* scope = fiber->scope;
  Continuation* expected = fiber->parent;
  CILKPROF_HOOK(g_hooks, child_end, &scope->tool);

  Message message{MessageKind::kFreeFiber, fiber};
  if (Continuation* parent = worker->deque.Pop(); parent != nullptr) {
    if (parent != expected) Fatal("cilk: internal error: the deque's newest entry is not the parent.\n");
    if (!ForceSteal(runtime)) return SwitchTo(parent->fctx, parent->stack, &message, /*dying=*/false);
    Continuation** link = &parent->ancestors;
    worker->deque.DrainOldestFirst([&link](Continuation* older) {
      *link = older;
      link = &older->next_ancestor;
    });
    *link = nullptr;
    PostForced(runtime, parent, worker->record.worker_id);
  } else if (scope->join.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The parent was stolen, is parked at its sync and this was its last child.
    scope->join.store(1, std::memory_order_relaxed);
    return SwitchTo(scope->resume_fctx, scope->resume_stack, &message, /*dying=*/false);
  }
  return SwitchTo(worker->sched_fctx, worker->sched_stack, &message, /*dying=*/false);
}

std::exception_ptr SyncChildren(ScopeState* scope, const void* callsite) {
  CILKPROF_HOOK(g_hooks, sync_begin, &scope->tool, callsite);
  if (scope->join.load(std::memory_order_acquire) != 1) {
    Worker* worker = CurrentWorker();
    SetState(worker, CILKPROF_STATE_OVERHEAD);
    Stack* stack = StackOf(worker->record.segment);
    Message message{MessageKind::kParkAtSync, nullptr, scope, stack};
    worker = OnStrandResumed(SwitchTo(worker->sched_fctx, worker->sched_stack, &message, false));
    RunStrandOn(worker, stack);
  }
  CILKPROF_HOOK(g_hooks, sync_end, &scope->tool);
  std::exception_ptr error;
  if (scope->error_claimed.load(std::memory_order_relaxed) != 0) {
    error = std::move(scope->error);
    scope->error = nullptr;
    scope->error_claimed.store(0, std::memory_order_relaxed);
  }
  return error;
}

}  // namespace

void FiberLoop(cilk::detail::transfer from) {
  sanitizer::FinishSwitch(nullptr);  // first entry of a fresh context
  for (;;) {
    const auto* request = static_cast<const SpawnRequest*>(from.data);
    Fiber* const fiber = request->fiber;
    request->entry(from);  // fiber_main<Fn, kMove>: the child, start to end
    from = EndChild(fiber);
  }
}

void WorkerThreadMain(Worker* worker) {
  tls_worker = worker;
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
    // A pooled fiber may hold its loop's suspended frames: the new context replaces them.
    sanitizer::ForgetFrames(s.segment.stack_lo, s.segment.stack_hi);
    worker->sched_fctx = bctx::make_fcontext(reinterpret_cast<void*>(s.segment.stack_hi),
                                             s.segment.stack_hi - s.segment.stack_lo, &SchedulerFiberMain);
  }
  rt.active_roots.fetch_add(1, std::memory_order_seq_cst);
  scope->flags |= kScopeRoot;
  worker->record.segment = &rt.root_stack.segment;
  SetBusy(worker, CILKPROF_STATE_WORKING);
}

}  // namespace cilk::rt

using cilk::rt::AsScope;
using cilk::rt::CurrentWorker;
using cilk::rt::g_hooks;
using cilk::rt::g_runtime;

namespace cilk::detail {

void scope_enter(scope_state* opaque) {
  rt::ScopeState* scope = ::new (static_cast<void*>(opaque)) rt::ScopeState();
  if (CurrentWorker() == nullptr) rt::BindRoot(scope);
  CILKPROF_HOOK(g_hooks, scope_enter, &scope->tool, __builtin_return_address(0));
}

void scope_sync(scope_state* opaque) {
  rt::ScopeState* scope = AsScope(opaque);
  std::exception_ptr error = rt::SyncChildren(scope, __builtin_return_address(0));
  if ((scope->flags & rt::kScopeRoot) != 0) rt::ReturnToOrigin();
  if (error) std::rethrow_exception(std::move(error));
}

void scope_leave(scope_state* opaque) {
  rt::ScopeState* scope = AsScope(opaque);
  std::exception_ptr error = rt::SyncChildren(scope, __builtin_return_address(0));
  CILKPROF_HOOK(g_hooks, scope_exit, &scope->tool);
  const bool root = (scope->flags & rt::kScopeRoot) != 0;
  // Leaving by an exception already (the destructor runs during unwinding): the
  // child's exception is dropped, since throwing it would call std::terminate.
  const bool unwinding = error && std::uncaught_exceptions() > 0;
  scope->~ScopeState();
  if (root) {
    rt::ReturnToOrigin();
    rt::UnbindRoot();
  }
  if (error && !unwinding) std::rethrow_exception(std::move(error));
}

void* child_begin(transfer from) noexcept {
  const auto* request = static_cast<const rt::SpawnRequest*>(from.data);
  rt::Continuation* parent = request->continuation;
  rt::Fiber* fiber = request->fiber;
  parent->fctx = from.fctx;
  fiber->scope = parent->scope;
  fiber->parent = parent;
  rt::Worker* worker = CurrentWorker();
  worker->deque.Push(parent);  // from here on the parent may be stolen
  if (g_runtime->config.force_steal) {
    g_runtime->idle.NotifyWorkStrict();
  } else {
    g_runtime->idle.NotifyWorkRelaxed();
  }
  worker->record.segment = &fiber->stack.segment;  // WORKING once cilk_invoke_child runs
  return fiber;
}

void child_error(void* child, std::exception_ptr& error) noexcept {
  rt::RecordError(static_cast<rt::Fiber*>(child)->scope, error);
}

}  // namespace cilk::detail

// The runtime entry frame under every child's code (see runtime_entry.hpp).
extern "C" __attribute__((noinline, section("cilk_trampoline_text"))) void cilk_invoke_child(
    cilk::detail::child_function function, void* object) {
  cilk::rt::SetState(CurrentWorker(), CILKPROF_STATE_WORKING);
  function(object);
  cilk::rt::SetState(CurrentWorker(), CILKPROF_STATE_OVERHEAD);  // the child may have moved
}

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

// Called by cilk_spawn_shim with the spawn point's registers. The fast path: a
// fiber from the worker's cache, its segment filled in, one switch to its loop;
// the next switch back (normally from the child's end, on this worker) resumes here.
extern "C" CILK_HIDDEN void cilk_rt_spawn(cilk::detail::scope_state* opaque, cilk::detail::fiber_entry entry,
                                          void* closure, const cilkprof_saved_regs_t* spawn_point) {
  namespace rt = cilk::rt;
  rt::ScopeState* scope = AsScope(opaque);
  rt::Worker* worker = CurrentWorker();
  rt::SetState(worker, CILKPROF_STATE_OVERHEAD);
  CILKPROF_HOOK(g_hooks, spawn, &scope->tool, reinterpret_cast<const void*>(spawn_point->pc));

  const cilkprof_segment_t* parent_segment = worker->record.segment;
  rt::Fiber* fiber = g_runtime->stacks.Allocate(&worker->cache);
  cilkprof_segment_t& segment = fiber->stack.segment;  // stack and entry bounds are set already
  segment.parent = parent_segment;
  CopySpawnPoint(&segment.spawn, spawn_point);

  rt::Continuation continuation;
  continuation.stack = rt::StackOf(parent_segment);
  continuation.scope = scope;
  rt::SpawnRequest request{{closure}, entry, &continuation, fiber};
  // The profiler: during the switch, `segment` names the stack being entered (the
  // child's), so an OVERHEAD sample there is charged to this spawn.
  worker->record.segment = &segment;
  worker = rt::OnStrandResumed(rt::SwitchTo(fiber->fctx, &fiber->stack, &request, /*dying=*/false));
  rt::RunStrandOn(worker, continuation.stack);
  CILKPROF_HOOK(g_hooks, continuation, &scope->tool);
}
