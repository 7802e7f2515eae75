// Start-up (configuration, workers, the tool), shutdown at exit, and the profiler's
// view of the runtime (cilkprof/runtime_abi.h).
#include "runtime.hpp"

#include "asymmetric_fence.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cilk::rt {

Runtime* g_runtime = nullptr;
const cilkprof_hooks_t* g_hooks = nullptr;
std::atomic<const cilkprof_hooks_t*> g_function_hooks{nullptr};
std::atomic<uint32_t> g_workers{0};
std::atomic<uint32_t> g_working{0};
__thread Worker* tls_worker __attribute__((tls_model("initial-exec"))) = nullptr;

}  // namespace cilk::rt

namespace cilk::detail {
__thread bool tls_inline_scopes __attribute__((tls_model("initial-exec"))) = false;
}  // namespace cilk::detail

namespace cilk::rt {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the ABI exposes the counters as uint32_t");

void Fatal(const char* message) noexcept {
  const std::size_t length = strlen(message);
  ssize_t ignored = write(STDERR_FILENO, message, length);
  (void)ignored;
  std::abort();
}

void NativeStackBounds(uintptr_t* lo, uintptr_t* hi) {
  *lo = 0;
  *hi = 0;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* address = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &address, &size) == 0) {
    *lo = reinterpret_cast<uintptr_t>(address);
    *hi = *lo + size;
  }
  pthread_attr_destroy(&attr);
}

namespace {

cilkprof_worker_t* CurrentWorkerRecord() {
  Worker* worker = tls_worker;
  return worker != nullptr ? &worker->record : nullptr;
}

const cilkprof_runtime_t kRuntimeView = {
    CILKPROF_RUNTIME_ABI_VERSION,
    "cilk-model",
    reinterpret_cast<const volatile uint32_t*>(&g_workers),
    reinterpret_cast<const volatile uint32_t*>(&g_working),
    &CurrentWorkerRecord,
};

// Stops and joins the pool threads when the process exits. If the exit comes from a
// worker, or while a computation is still running, the threads cannot be joined
// safely; they are left to the kernel (exit ends every thread) and nothing they may
// still touch is freed.
struct ShutdownAtExit {
  ~ShutdownAtExit() {
    Runtime* runtime = g_runtime;
    if (runtime == nullptr) return;
    runtime->stop.store(true, std::memory_order_seq_cst);
    runtime->idle.WakeAll();
    Worker* self = tls_worker;
    const bool from_pool_thread = self != nullptr && self->record.worker_id != 0;
    if (from_pool_thread || runtime->active_roots.load(std::memory_order_seq_cst) != 0) return;
    // In a fork child the workers are the parent's threads. Joining their copies is
    // not harmless: a thread the child started since (a preloaded profiler's) can reuse
    // a dead worker's descriptor, and the join then waits for that thread for ever.
    if (::getpid() != runtime->pid) return;
    for (Worker* worker : runtime->workers) {
      if (worker->thread.joinable()) worker->thread.join();
    }
  }
};

Runtime* CreateRuntime() {
  auto* runtime = new Runtime();  // never freed: threads may outlive exit handlers
  runtime->config = ReadConfigFromEnvironment();
  runtime->pid = ::getpid();
  runtime->nworkers = runtime->config.workers;
  runtime->force_steal = runtime->config.force_steal && runtime->nworkers >= 2;
  runtime->stacks.Init(runtime->config.stack_size, runtime->nworkers);
  runtime->workers.reserve(runtime->nworkers);
  for (uint32_t i = 0; i < runtime->nworkers; ++i) {
    auto* worker = new Worker();
    worker->record.worker_id = i;
    worker->record.state = CILKPROF_STATE_NOT_A_WORKER;
    worker->rng = 0x9E3779B97F4A7C15ull * (i + 1) ^ static_cast<uint64_t>(getpid());
    worker->sched_stack = &worker->native_stack;
    runtime->workers.push_back(worker);
  }
  // Pops pay a compiler barrier instead of a fence; steals pay a membarrier. (With
  // one worker nothing steals, but the pop is the same as with many.)
  asymmetric_fence::Enable();
  g_workers.store(runtime->nworkers, std::memory_order_release);
  InstallOverflowHandler(*runtime);

  // The tool, before any worker runs user code, on the thread starting the runtime.
  // A tool loaded after this library (dlopen()ed, e.g. an agent injected before the
  // program first entered the runtime) did not bind the weak reference: look it up.
  auto* tool_attach = &cilkprof_tool_attach;
  if (tool_attach == nullptr) {
    tool_attach = reinterpret_cast<decltype(tool_attach)>(dlsym(RTLD_DEFAULT, "cilkprof_tool_attach"));
  }
  const cilkprof_hooks_t* hooks = tool_attach != nullptr ? tool_attach(&kRuntimeView) : nullptr;
  // g_hooks, g_function_hooks, and cilkprof_runtime_view from now on (late_attach.cpp).
  StartHooks(runtime, hooks, &kRuntimeView);

  g_runtime = runtime;
  for (uint32_t i = 1; i < runtime->nworkers; ++i) {
    Worker* worker = runtime->workers[i];
    worker->thread = std::thread(WorkerThreadMain, worker);
  }
  return runtime;
}

}  // namespace

Runtime& StartRuntime() {
  static Runtime* const runtime = CreateRuntime();
  static ShutdownAtExit shutdown;  // registered after the runtime: runs before its users' statics die
  (void)shutdown;
  return *runtime;
}

}  // namespace cilk::rt

namespace cilk::detail {

bool in_runtime() noexcept { return rt::CurrentWorker() != nullptr; }

long automatic_grain(unsigned long iterations) noexcept {
  const unsigned long workers = rt::StartRuntime().nworkers;
  unsigned long grain = iterations / (8 * workers);
  if (grain < 1) grain = 1;
  if (grain > 2048) grain = 2048;
  return static_cast<long>(grain);
}

}  // namespace cilk::detail
