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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "cilk/detail/runtime_entry.hpp"
#include "cilkprof/runtime_abi.h"
#include "config.hpp"
#include "idle_sleep.hpp"
#include "sanitizer_fibers.hpp"
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
  // The fiber's loop (FiberLoop), suspended where it waits for its next child:
  // what a spawn switches to. Made once, when the stack is mapped.
  void* fctx = nullptr;
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

enum : uint32_t { kScopeRoot = 1u };

// The library's layout of cilk::detail::scope_state.
struct ScopeState {
  cilkprof_frame_t tool{};               // the tool's per-frame data
  // 1 while the scope's strand is running (not parked at its sync) + children whose
  // continuation was stolen and that have not ended. Reaching 0 means: the strand is
  // parked at the sync and its last child just ended, so that child resumes it.
  std::atomic<uint32_t> join{1};
  uint32_t flags = 0;
  void* resume_fctx = nullptr;           // the strand parked at the sync
  Stack* resume_stack = nullptr;
  std::atomic<uint32_t> error_claimed{0};
  std::exception_ptr error;              // the first exception a child threw
};
static_assert(sizeof(ScopeState) <= sizeof(cilk::detail::scope_state));
static_assert(alignof(ScopeState) <= alignof(cilk::detail::scope_state));

inline ScopeState* AsScope(cilk::detail::scope_state* opaque) {
  return reinterpret_cast<ScopeState*>(opaque);
}

// A parent strand suspended at a spawn: what thieves take.
struct Continuation {
  void* fctx = nullptr;       // set by the child before it publishes this record
  Stack* stack = nullptr;
  ScopeState* scope = nullptr;
  // CILK_FORCE_STEAL hand-off: the queue link, who ran the child (must not resume
  // it), and the older continuations of that worker's deque, oldest first, which
  // move with it so that a worker's deque always holds only the ancestors of the
  // strand it runs.
  Continuation* next_forced = nullptr;
  uint32_t child_worker = 0;
  Continuation* ancestors = nullptr;
  Continuation* next_ancestor = nullptr;
};

// transfer::data of a fiber when a spawn hands it a child.
struct SpawnRequest {
  cilk::detail::spawn_request base;  // first: fiber_main reads base.closure
  cilk::detail::fiber_entry entry;   // fiber_main<Fn, kMove>
  Continuation* continuation;
  Fiber* fiber;
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
  TheDeque<Continuation> deque;
  void* sched_fctx = nullptr;     // this worker's scheduler, while a strand runs
  Stack* sched_stack = nullptr;
  Stack native_stack;             // pool threads: the thread's own stack
  Fiber* sched_fiber = nullptr;   // worker 0: its scheduler runs on a fiber
  FiberCache cache;
  uint64_t rng = 0;
  bool busy = false;              // counted in g_working
  std::thread thread;
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
  uint32_t nworkers = 1;
  std::vector<Worker*> workers;
  StackPool stacks;
  IdleSleep idle;
  std::atomic<bool> stop{false};
  std::atomic<int> active_roots{0};
  std::mutex entry_mutex;             // one entering thread at a time
  Stack root_stack;                   // the entering thread's stack while bound
  std::atomic<void*> root_handoff{nullptr};
  // CILK_FORCE_STEAL: continuations whose child ended, for another worker.
  std::mutex forced_mutex;
  Continuation* forced_head = nullptr;
  std::atomic<int> forced_count{0};
};

// ---- globals (runtime.cpp) ----
extern CILK_HIDDEN Runtime* g_runtime;
extern CILK_HIDDEN const cilkprof_hooks_t* g_hooks;
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
// The bottom function of every pooled fiber: runs one child per spawn that takes
// the fiber, for as long as the fiber lives (its argument is a Boost transfer_t).
CILK_HIDDEN void FiberLoop(cilk::detail::transfer from);
CILK_HIDDEN void BindRoot(ScopeState* scope);

// overflow_guard.cpp
CILK_HIDDEN void InstallOverflowHandler(const Runtime& runtime);
CILK_HIDDEN void EnsureAltSignalStack();

// Native stack bounds of the calling thread.
CILK_HIDDEN void NativeStackBounds(uintptr_t* lo, uintptr_t* hi);

inline void SetState(Worker* w, cilkprof_worker_state_t state) {
  w->record.state = static_cast<uint32_t>(state);
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
