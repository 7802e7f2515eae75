// Which hooks the runtime calls, after start-up too: cilkprof_runtime_view and
// cilkprof_runtime_set_hooks (cilkprof/runtime_abi.h, "Late attach"), for a profiler
// that arrives while the program runs (an attach to a standby agent, an injected one).
//
// A change of hooks takes effect only at a quiescent moment, when no top-level
// computation (root) runs, so that a tool sees whole computations or none:
//   - at once, in cilkprof_runtime_set_hooks, if no root runs;
//   - else at the end of the last running root (UnbindRoot, after its scope_exit), or
//     at the beginning of a root while no other runs (BindRoot, before its first hook).
// The hot path pays one load of g_hooks_change_pending at each root's begin and end.
//
// Why a root boundary is enough: every hook event of a computation (scope, spawn,
// child, sync) happens on a worker running that root's strands, and all of them
// happen-before the root's end (its final sync waits for every child). Pool workers
// read their tls_inline_scopes only while running strands of a root, so it can be
// rewritten for them (through Worker::inline_scopes) while no root runs.
//
// Pairing with concurrent roots (Dekker, seq_cst): a requester stores pending, then
// loads active_roots; a root counts itself in active_roots, then loads pending. So
// either the requester sees the root (and leaves the change to a root boundary), or
// the root sees pending and takes the mutex, where it waits for an install in
// progress. Whoever installs holds the mutex and first checks that no other root is
// counted.
#include <pthread.h>

#include "runtime.hpp"

namespace cilk::rt {

std::atomic<bool> g_hooks_change_pending{false};

namespace {

// The rare path: requests, installs, pool threads registering. Held across fork by
// the atfork handlers, so a fork child never inherits it locked.
pthread_mutex_t g_hooks_mutex = PTHREAD_MUTEX_INITIALIZER;
// Under g_hooks_mutex:
Runtime* g_started = nullptr;                  // the runtime, once its hooks were set at start
const cilkprof_hooks_t* g_requested = nullptr;  // the latest cilkprof_runtime_set_hooks value
bool g_requested_before_start = false;
// The view a late tool finds: null until the runtime started.
std::atomic<const cilkprof_runtime_t*> g_view{nullptr};

class HooksLock {
 public:
  HooksLock() { pthread_mutex_lock(&g_hooks_mutex); }
  ~HooksLock() { pthread_mutex_unlock(&g_hooks_mutex); }
  HooksLock(const HooksLock&) = delete;
  HooksLock& operator=(const HooksLock&) = delete;
};

void LockForFork() { pthread_mutex_lock(&g_hooks_mutex); }
void UnlockAfterFork() { pthread_mutex_unlock(&g_hooks_mutex); }

// g_hooks_mutex held, no root running (none counted but the caller's own, which has
// not called a hook yet): every place that caches the hooks takes `hooks`.
void InstallLocked(Runtime& rt, const cilkprof_hooks_t* hooks) {
  g_hooks = hooks;
  g_function_hooks.store(hooks, std::memory_order_release);
  // Pool threads' inline-scope flag (worker 0's is set by BindRoot on the entering
  // thread, after this).
  for (Worker* worker : rt.workers) {
    if (worker->inline_scopes != nullptr) *worker->inline_scopes = hooks == nullptr;
  }
}

}  // namespace

void StartHooks(Runtime* runtime, const cilkprof_hooks_t* from_tool, const cilkprof_runtime_t* view) {
  HooksLock lock;
  // A request made before the start is the later decision of a tool that is already
  // here: it wins over what a start-up tool returned.
  g_hooks = g_requested_before_start ? g_requested : from_tool;
  // Any thread may run instrumented code now: they see the hooks through this one.
  g_function_hooks.store(g_hooks, std::memory_order_release);
  g_started = runtime;
  g_view.store(view, std::memory_order_release);
  pthread_atfork(&LockForFork, &UnlockAfterFork, &UnlockAfterFork);
}

void RegisterPoolWorker(Worker* worker) {
  HooksLock lock;
  cilk::detail::tls_inline_scopes = g_hooks == nullptr;
  worker->inline_scopes = &cilk::detail::tls_inline_scopes;
}

void ApplyPendingHooks(Runtime& rt, int own_roots) {
  HooksLock lock;
  if (!g_hooks_change_pending.load(std::memory_order_relaxed)) return;  // applied meanwhile
  // Another root runs (it began while a change was pending, or the request came while
  // it ran): its end applies the change.
  if (rt.active_roots.load(std::memory_order_seq_cst) != own_roots) return;
  InstallLocked(rt, g_requested);
  g_hooks_change_pending.store(false, std::memory_order_seq_cst);
}

}  // namespace cilk::rt

using cilk::rt::g_hooks_change_pending;

extern "C" __attribute__((visibility("default"))) const cilkprof_runtime_t* cilkprof_runtime_view(void) {
  return cilk::rt::g_view.load(std::memory_order_acquire);
}

extern "C" __attribute__((visibility("default"))) void cilkprof_runtime_set_hooks(const cilkprof_hooks_t* hooks) {
  using namespace cilk::rt;
  HooksLock lock;
  g_requested = hooks;
  if (g_started == nullptr) {
    g_requested_before_start = true;  // StartHooks applies it
    return;
  }
  g_hooks_change_pending.store(true, std::memory_order_seq_cst);
  if (g_started->active_roots.load(std::memory_order_seq_cst) != 0) return;  // a root boundary applies it
  InstallLocked(*g_started, hooks);
  g_hooks_change_pending.store(false, std::memory_order_seq_cst);
}
