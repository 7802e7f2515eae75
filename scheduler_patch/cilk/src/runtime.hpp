// The runtime's internal state: stacks, fibers, scopes, continuations, workers.
//
// Vocabulary (docs/RUNTIME.md has the full story):
//   strand        user code between two scheduling events, running on a Stack;
//   Stack         a pooled fiber stack, a pool thread's native stack (its
//                 scheduler) or the entering thread's native stack (the root
//                 strand); its first member is the profiler's segment;
//   Continuation  a parent strand suspended at a spawn, in its worker's deque,
//                 stored in the spawn call's frame on the parent's own stack;
//   context       a Boost.Context fcontext_t: a suspended execution.
// Every switch carries a Message telling the receiving context what to do with
// the context it came from (free its fiber, park it at a sync, hand it home...).
#ifndef CILK_SRC_RUNTIME_HPP_
#define CILK_SRC_RUNTIME_HPP_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#include "cilk/detail/runtime_entry.hpp"
#include "cilkprof/runtime_abi.h"
#include "config.hpp"
#include "fp_control.hpp"
#include "idle_sleep.hpp"
#include "sanitizer_fibers.hpp"
#include "spawn_abi.h"
#include "the_deque.hpp"

#define CILK_HIDDEN __attribute__((visibility("hidden")))

namespace cilk::rt {

struct Stack {
  cilkprof_segment_t segment{};  // first member: a segment pointer is a Stack pointer
  void* tsan_fiber = nullptr;
};
static_assert(offsetof(Stack, segment) == 0);

inline Stack* StackOf(const cilkprof_segment_t* segment) {
  return reinterpret_cast<Stack*>(const_cast<cilkprof_segment_t*>(segment));
}

struct ScopeState;
struct Continuation;

// A pooled fiber stack. The descriptor sits at the top of its own mapping:
//   [guard page(s), PROT_NONE][usable stack: segment.stack_lo .. stack_hi][Fiber]
// (the Fiber takes the last 64-byte lines of the stack's top page)
struct Fiber {
  Stack stack;
  Fiber* next_free = nullptr;
  void* map_base = nullptr;
  std::size_t map_size = 0;
  // While a child runs on this fiber: its scope and its parent's continuation.
  ScopeState* scope = nullptr;
  Continuation* parent = nullptr;
};

// A worker's private LIFO of free fibers: the most recently freed stack, whose top
// pages are still in the cache, is the next one a spawn gets. Owner thread only.
struct FiberCache {
  Fiber* head = nullptr;
  uint32_t count = 0;
};

enum : uint32_t {
  kScopeSlow = cilk::detail::kScopeSlowPaths,  // constructed by scope_enter
  kScopeRoot = 2u,                             // binds the entering thread
};

// The library's layout of cilk::detail::scope_state. A scope the header entered
// inline (no tool, not the root) has only `core` initialized: `tool` is used only
// with a tool, `resume_*` are written when the strand parks, `error` is constructed
// when a child claims it. So the layout is trivially destructible.
struct ScopeState {
  cilk::detail::scope_core core;         // join, flags, error_claimed
  cilkprof_frame_t tool;                 // the tool's per-frame data
  void* resume_fctx;                     // the strand parked at the sync
  Stack* resume_stack;
  // The first exception a child threw: a std::exception_ptr, constructed by the
  // child that sets core.error_claimed, destroyed by the sync that takes it.
  alignas(std::exception_ptr) unsigned char error[sizeof(std::exception_ptr)];

  std::exception_ptr* Error() { return std::launder(reinterpret_cast<std::exception_ptr*>(error)); }
};
static_assert(offsetof(ScopeState, core) == offsetof(cilk::detail::scope_state, core));
static_assert(std::is_trivially_destructible_v<ScopeState>);
static_assert(sizeof(ScopeState) <= sizeof(cilk::detail::scope_state));
static_assert(alignof(ScopeState) <= alignof(cilk::detail::scope_state));

inline ScopeState* AsScope(cilk::detail::scope_state* opaque) {
  return reinterpret_cast<ScopeState*>(opaque);
}

// A parent strand suspended at a spawn: what thieves take.
// Built by every spawn, so its fields have no initializers: the spawn sets the
// first three; the CILK_FORCE_STEAL ones are set when the hand-off happens.
struct Continuation {
  void* fctx;                 // the parent's context (saved by SpawnSwitch)
  Stack* stack;
  ScopeState* scope;
  // CILK_FORCE_STEAL hand-off (EndChild, PostForced): the queue link, who ran the
  // child (must not resume it), and the older continuations of that worker's deque,
  // oldest first, which move with it so that a worker's deque always holds only the
  // ancestors of the strand it runs.
  Continuation* next_forced;
  uint32_t child_worker;
  Continuation* ancestors;
  Continuation* next_ancestor;
};

enum class MessageKind : uint32_t {
  kFromScheduler,   // to a strand: the sender is your worker's scheduler context
  kFreeFiber,       // the sender (a finished child's fiber) is dead: recycle it
  kParkAtSync,      // to a scheduler: the sender waits at scope's sync
  kReturnToOrigin,  // to a scheduler: the sender is the root strand; send it home
};

struct Message {
  MessageKind kind;
  Fiber* fiber = nullptr;
  ScopeState* scope = nullptr;
  Stack* stack = nullptr;
};

struct alignas(64) Worker {
  cilkprof_worker_t record{};     // what the profiler reads; first member
  // cilk_spawn_shim stores the spawn point straight into the segment of the fiber
  // the spawn will take (the head of `cache`), or here when the cache is empty
  // (cilk_rt_spawn then copies it into the fiber it maps).
  cilkprof_saved_regs_t spawn_point{};
  FiberCache cache;               // at a fixed offset: the shim reads cache.head
  TheDeque<Continuation> deque;
  void* sched_fctx = nullptr;     // this worker's scheduler, while a strand runs
  Stack* sched_stack = nullptr;
  Stack native_stack;             // pool threads: the thread's own stack
  Fiber* sched_fiber = nullptr;   // worker 0: its scheduler runs on a fiber
  uint64_t rng = 0;
  bool busy = false;              // counted in g_working
  std::thread thread;
  // Pool threads: the thread's cilk::detail::tls_inline_scopes, which a change of hooks
  // rewrites while no root runs (late_attach.cpp). Null for worker 0 (BindRoot sets
  // the entering thread's own).
  bool* inline_scopes = nullptr;
};

// Guard-paged fiber stacks (stack_pool.cpp). A spawn takes a fiber from its worker's
// cache and the fiber goes back to the cache of the worker on which it ends, so the
// fast paths below touch only the calling worker's own data. The shared free list
// is used in batches, when a cache runs empty or full, under a mutex.
class StackPool {
 public:
  // Per-worker cache bound: deeper than the spawn depth of most programs, so a
  // recursion that goes up and down stays inside its worker's cache.
  static constexpr uint32_t kWorkerCacheLimit = 64;
  // Fibers moved between a cache and the shared list at a time.
  static constexpr uint32_t kBatch = kWorkerCacheLimit / 2;

  void Init(std::size_t usable_size, uint32_t workers);
  // `cache` may be null (worker 0's scheduler fiber).
  Fiber* Allocate(FiberCache* cache) {
    if (cache != nullptr && cache->head != nullptr) {
      Fiber* fiber = cache->head;
      cache->head = fiber->next_free;
      --cache->count;
      return fiber;
    }
    return AllocateSlow(cache);
  }
  void Release(FiberCache* cache, Fiber* fiber) {
    if (cache != nullptr && cache->count < kWorkerCacheLimit) {
      fiber->next_free = cache->head;
      cache->head = fiber;
      ++cache->count;
      return;
    }
    ReleaseSlow(cache, fiber);
  }
  std::size_t usable_size() const { return usable_size_; }
  std::size_t guard_size() const { return guard_size_; }

 private:
  Fiber* AllocateSlow(FiberCache* cache);
  void ReleaseSlow(FiberCache* cache, Fiber* fiber);
  Fiber* Map();
  void Unmap(Fiber* fiber);

  std::size_t usable_size_ = 0;
  std::size_t guard_size_ = 0;
  std::size_t map_size_ = 0;
  std::size_t global_limit_ = 0;
  std::mutex mutex_;
  Fiber* global_ = nullptr;
  std::size_t global_count_ = 0;
};

struct Runtime {
  Config config;
  pid_t pid = 0;  // the process that started the workers (a fork child has none of them)
  uint32_t nworkers = 1;
  bool force_steal = false;  // config.force_steal with >= 2 workers: the mode is on
  std::vector<Worker*> workers;
  StackPool stacks;
  IdleSleep idle;
  std::atomic<bool> stop{false};
  std::atomic<int> active_roots{0};
  std::mutex entry_mutex;             // one entering thread at a time
  Stack root_stack;                   // the entering thread's stack while bound
  std::atomic<void*> root_handoff{nullptr};
  FpControl entry_fp;                 // the entering thread's, for stolen work
  // CILK_FORCE_STEAL: continuations whose child ended, for another worker.
  std::mutex forced_mutex;
  Continuation* forced_head = nullptr;
  std::atomic<int> forced_count{0};
};

static_assert(offsetof(Worker, spawn_point) == CILK_WORKER_SPAWN_POINT_OFFSET, "spawn_abi.h is out of date");
static_assert(offsetof(Worker, cache) + offsetof(FiberCache, head) == CILK_WORKER_CACHE_HEAD_OFFSET,
              "spawn_abi.h is out of date");
static_assert(offsetof(Fiber, stack) + offsetof(Stack, segment) + offsetof(cilkprof_segment_t, spawn) ==
                  CILK_FIBER_SPAWN_POINT_OFFSET,
              "spawn_abi.h is out of date");
static_assert(offsetof(cilkprof_saved_regs_t, pc) == 0 && offsetof(cilkprof_saved_regs_t, sp) == 8 &&
                  offsetof(cilkprof_saved_regs_t, fp) == 16 && offsetof(cilkprof_saved_regs_t, rbx) == 24 &&
                  offsetof(cilkprof_saved_regs_t, r15) == 56,
              "spawn_shim.S stores the registers in this order");

// ---- globals (runtime.cpp) ----
extern CILK_HIDDEN Runtime* g_runtime;
// Written only while no root runs (late_attach.cpp), read by hook sites in roots.
extern CILK_HIDDEN const cilkprof_hooks_t* g_hooks;
// The same, for __cyg_profile_func_enter/exit (instrument_functions.cpp), which any
// thread may call at any time, also while the runtime starts.
extern CILK_HIDDEN std::atomic<const cilkprof_hooks_t*> g_function_hooks;
// The timeline tool's event table (tool_events.cpp; cilkprof/runtime_abi.h, "Scheduling
// events"), or null. Any thread may change it at any time: read it once per event.
extern CILK_HIDDEN std::atomic<const cilkprof_events_t*> g_events;
inline const cilkprof_events_t* Events() noexcept { return g_events.load(std::memory_order_acquire); }
extern CILK_HIDDEN std::atomic<uint32_t> g_workers;
extern CILK_HIDDEN std::atomic<uint32_t> g_working;
// The calling thread's worker (initial-exec TLS: a %fs-relative load, no call,
// async-signal-safe). __thread rather than thread_local: no TLS wrapper function.
extern __thread Worker* tls_worker __attribute__((tls_model("initial-exec"), visibility("hidden")));

// Re-reads the thread's worker. After a context switch the strand may be on
// another thread: the compiler barrier keeps an earlier load from being reused,
// and the %fs-relative load never caches the thread pointer in a register.
inline Worker* CurrentWorker() noexcept {
  __asm__ volatile("" : : : "memory");
  return tls_worker;
}

CILK_HIDDEN Runtime& StartRuntime();
[[noreturn]] CILK_HIDDEN void Fatal(const char* message) noexcept;

// scheduler.cpp
CILK_HIDDEN void WorkerThreadMain(Worker* worker);
CILK_HIDDEN void BindRoot(ScopeState* scope);

// late_attach.cpp: changing the hooks after start-up at a moment no root runs.
// Set while a cilkprof_runtime_set_hooks request waits for such a moment.
extern CILK_HIDDEN std::atomic<bool> g_hooks_change_pending;
// At start-up, after cilkprof_tool_attach: sets g_hooks and g_function_hooks (a
// request made before the start wins over `from_tool`) and publishes `view` for
// cilkprof_runtime_view.
CILK_HIDDEN void StartHooks(Runtime* runtime, const cilkprof_hooks_t* from_tool, const cilkprof_runtime_t* view);
// A pool thread, first thing: sets its tls_inline_scopes and lets changes rewrite it.
CILK_HIDDEN void RegisterPoolWorker(Worker* worker);
// Applies a pending change if no root but the caller's own `own_roots` (0 or 1) runs.
CILK_HIDDEN void ApplyPendingHooks(Runtime& rt, int own_roots);

// A root has just been counted in active_roots (BindRoot), before its first hook.
inline void ApplyHooksAtRootBegin(Runtime& rt) {
  if (__builtin_expect(g_hooks_change_pending.load(std::memory_order_seq_cst), 0)) ApplyPendingHooks(rt, 1);
}

// A root has just been counted out (UnbindRoot), after its last hook; `roots_before`:
// active_roots before it was.
inline void ApplyHooksAtRootEnd(Runtime& rt, int roots_before) {
  if (__builtin_expect(g_hooks_change_pending.load(std::memory_order_seq_cst), 0) && roots_before == 1) {
    ApplyPendingHooks(rt, 0);
  }
}

// overflow_guard.cpp
CILK_HIDDEN void InstallOverflowHandler(const Runtime& runtime);
CILK_HIDDEN void EnsureAltSignalStack();

// Native stack bounds of the calling thread.
CILK_HIDDEN void NativeStackBounds(uintptr_t* lo, uintptr_t* hi);

inline void SetState(Worker* w, cilkprof_worker_state_t state) {
  w->record.state = static_cast<uint32_t>(state);
}

// The fiber of a child segment.
inline Fiber* FiberOf(const cilkprof_segment_t* segment) {
  static_assert(offsetof(Fiber, stack) == 0);
  return reinterpret_cast<Fiber*>(StackOf(segment));
}

// A child's first act, on its worker, once it owns its callable: publish its
// parent's continuation (its fiber's parent) for thieves.
inline void PublishParent(Worker* worker, Fiber* child) {
  worker->deque.Push(child->parent);  // from here on the parent may be stolen
  if (g_runtime->force_steal) {
    g_runtime->idle.NotifyWorkStrict();
  } else {
    g_runtime->idle.NotifyWorkRelaxed();
  }
}

inline void SetBusy(Worker* w, cilkprof_worker_state_t state) {
  if (!w->busy) {
    w->busy = true;
    g_working.fetch_add(1, std::memory_order_relaxed);
  }
  SetState(w, state);
}

inline void SetIdle(Worker* w, cilkprof_worker_state_t state = CILKPROF_STATE_IDLE) {
  SetState(w, state);
  if (w->busy) {
    w->busy = false;
    g_working.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace cilk::rt

#endif  // CILK_SRC_RUNTIME_HPP_
