// The agent side of the work/span tool: configuration from the environment, clock
// calibration, and sending (workspan.h).
//
// Sending uses the agent's flusher lock and transport: when a top-level computation
// ends (at most once per CILKPROF_FLUSH_MS, and only if the lock is free: the program's
// thread never waits for the flusher), and from an atexit handler registered when the
// tool is set up, which therefore runs before the agent's own exit handler (atexit
// handlers run in reverse order of registration) and so before its Goodbye.
//
// Windows (late_attach.h): the tool sends only while a window is open: from start-up
// (cilkprof_tool_attach) to exit, or from an attach (InstallWorkSpanHooks) to its
// detach (FlushWorkSpanForDetach). In standby the start-up discovery returns no hooks.
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "agent_state.h"
#include "instrumentation.h"
#include "log.h"
#include "monotonic_clock.h"
#include "real_functions.h"
#include "workspan/engine.h"
#include "workspan/report.h"
#include "workspan/settings.h"
#include "workspan/workspan.h"
#include "late_attach.h"

namespace cilkprof::agent::workspan {
namespace {

Reporter* g_reporter = nullptr;
uint64_t g_send_interval_ns = 1000000000ull;
uint64_t g_last_send_ns = 0;
// A window is open: the tool's figures go to the aggregator (atomic accesses: the
// program's threads read it when a computation ends).
bool g_window_open = false;
bool g_standby = false;  // atomic accesses
// The tool's set-up happens once (SetUpTool), on the thread that starts the runtime or
// on the one that attaches, whichever comes first.
pthread_mutex_t g_setup_mu = PTHREAD_MUTEX_INITIALIZER;
bool g_set_up = false;
const cilkprof_hooks_t* g_tool_hooks = nullptr;

bool WindowOpen() { return __atomic_load_n(&g_window_open, __ATOMIC_ACQUIRE); }

// Code of the runtime that, with the tool attached, runs only for the tool and that no
// mark of the runtime covers, registered by address as the tool's (instrumentation.h):
//   - the forwarders of function hooks, __cyg_profile_func_enter and _exit, which code
//     built with -finstrument-functions calls at every entry and exit, before the
//     hook raises the depth;
//   - the entry points of the library's scope paths (cilk-model: scope_enter,
//     scope_sync, scope_leave), frameless stubs that raise the worker's tool_path mark
//     and tail-call the body: the instructions before the mark's store take about
//     two thirds of their samples (the instruction-cache misses the tool's code
//     causes land on the first instructions after the call). With a tool attached
//     they run for the tool except at a root scope and at a sync that waits for a
//     stolen child: a few instructions per computation and per steal.
// Looked up in the runtime's own module (the one holding current_worker), so a
// program's own definitions are not taken for them; names the module does not define
// (another runtime) are skipped.
constexpr const char* kRuntimeToolCode[] = {
    "__cyg_profile_func_enter",
    "__cyg_profile_func_exit",
    "_ZN4cilk6detail11scope_enterEPNS0_11scope_stateEPKv",  // cilk::detail::scope_enter
    "_ZN4cilk6detail10scope_syncEPNS0_11scope_stateE",      // cilk::detail::scope_sync
    "_ZN4cilk6detail11scope_leaveEPNS0_11scope_stateE",     // cilk::detail::scope_leave
};

// `runtime_code`: any address in the runtime library.
void RegisterRuntimeToolCode(const void* runtime_code) {
  Dl_info module{};
  if (dladdr(runtime_code, &module) == 0 || module.dli_fname == nullptr) {
    return;
  }
  void* handle = dlopen(module.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return;
  for (const char* name : kRuntimeToolCode) {
    void* entry = dlsym(handle, name);
    Dl_info info{};
    void* symbol_entry = nullptr;  // the ElfW(Sym) of `entry`
    if (entry == nullptr || dladdr1(entry, &info, &symbol_entry, RTLD_DL_SYMENT) == 0 || symbol_entry == nullptr) {
      continue;
    }
    const auto* symbol = static_cast<const ElfW(Sym)*>(symbol_entry);
    if (info.dli_fbase != module.dli_fbase || symbol->st_size == 0) continue;  // not the runtime's
    const uintptr_t lo = reinterpret_cast<uintptr_t>(entry);
    AddToolCode(lo, lo + symbol->st_size);
  }
  // The agent's dlclose flushes first (interpose.cc): the real one, for a NOLOAD handle.
  if (real::dlclose() != nullptr) real::dlclose()(handle);
}

// The hooks' own instructions before and after their InstrumentationScope (the
// prologue takes the cost of the call into the tool) are the tool's code too. Their
// bounds come from the unwind tables: they are template instances (InstrumentedCall),
// which GCC will not place in a section of our choosing, with local symbols dladdr
// does not see.
void RegisterHookCode(const cilkprof_hooks_t& table) {
  constexpr size_t kMembers = sizeof(cilkprof_hooks_t) / sizeof(void (*)());
  void (*members[kMembers])();
  static_assert(sizeof(members) == sizeof(cilkprof_hooks_t));
  std::memcpy(members, &table, sizeof(table));
  for (void (*wrapper)() : members) {
    unw_proc_info_t info{};
    if (wrapper != nullptr &&
        unw_get_proc_info_by_ip(unw_local_addr_space, reinterpret_cast<unw_word_t>(wrapper), &info, nullptr) == 0) {
      AddToolCode(static_cast<uintptr_t>(info.start_ip), static_cast<uintptr_t>(info.end_ip));
    }
  }
}

void SendLocked(bool incomplete_check) {
  (void)incomplete_check;
  if (g_reporter == nullptr || g_state == nullptr || !AgentActive() || !WindowOpen()) return;
  if (!g_state->hello_sent) FlushLocked();  // the Hello must precede every Delta
  const Snapshot snapshot = TakeSnapshot();
  std::string frame = g_reporter->NextFrame(snapshot, EngineFailed());
  if (!frame.empty()) g_state->transport.Enqueue(std::move(frame));
  g_last_send_ns = MonotonicNs();
}

void SendAtExit() {
  if (g_state == nullptr || !AgentActive() || !WindowOpen()) return;
  pthread_mutex_lock(&g_state->flush_mu);
  SendLocked(true);
  pthread_mutex_unlock(&g_state->flush_mu);
}

void AfterForkInChild() {
  UnlockAfterFork();
  if (g_reporter != nullptr) g_reporter->ForgetSent(TakeSnapshot());
}

}  // namespace

// Called by the engine when a top-level computation has ended (engine.cc): sends if
// the interval has passed and the flusher's lock is free.
void OnTopLevelEnd() {
  if (g_reporter == nullptr || g_state == nullptr || !WindowOpen()) return;
  if (MonotonicNs() - g_last_send_ns < g_send_interval_ns) return;
  if (pthread_mutex_trylock(&g_state->flush_mu) != 0) return;
  SendLocked(false);
  pthread_mutex_unlock(&g_state->flush_mu);
}

namespace {

// The tool's set-up, once per process: configuration from the environment, clock
// calibration, the engine, the reporter, the exit and fork handlers. `runtime_code`:
// an address in the runtime library. Returns the hooks, or nullptr when work/span is
// off or cannot run. g_setup_mu held.
const cilkprof_hooks_t* SetUpToolLocked(const void* runtime_code) {
  if (!WorkSpanEnabled()) return nullptr;
  // The tool's set-up (the TSC calibration alone spins ~5 ms) runs inside the program's
  // first scope: its samples are instrumentation, not the scope's work. (Not before
  // the check above: with the tool off, nothing is instrumentation.)
  InstrumentationScope in_tool;
  const ClockSettings settings = ReadClockSettings();
  EngineConfig config;
  config.clock = settings.clock;
  config.burden_ticks = settings.burden_ticks;
  if (const char* strands = Env("CILKPROF_WS_STRANDS")) {
    if (std::strcmp(strands, "1") == 0) {
      config.strands = true;
    } else if (std::strcmp(strands, "0") != 0) {
      LogLine(std::string("CILKPROF_WS_STRANDS='") + strands + "' is invalid: expected 1 or 0; using 0");
    }
  }
  // Code of the runtime library: its child trampoline calls spawned callables.
  config.runtime_code = runtime_code;
  const ReportUnits units = UnitsOf(settings);
  if (g_state != nullptr) {
    g_send_interval_ns = uint64_t{g_state->config.flush_ms} * 1000000ull;
  }
  Configure(config);
  if (Hooks() == nullptr) {
    LogLine("cannot map memory for the work/span tables; work and span are not measured");
    return nullptr;
  }
  static Reporter reporter(units);  // static storage: used until exit
  g_reporter = &reporter;
  SetTopLevelEndCallback(&OnTopLevelEnd);
  atexit(&SendAtExit);
  pthread_atfork(&LockForFork, &UnlockAfterFork, &AfterForkInChild);
  RegisterRuntimeToolCode(runtime_code);
  // The hooks mark the thread as in the tool while they run (engine.cc, kHooks), so
  // that samples taken there are `instrumentation`.
  const cilkprof_hooks_t* hooks = Hooks();
  if (hooks != nullptr) RegisterHookCode(*hooks);
  return hooks;
}

const cilkprof_hooks_t* SetUpTool(const void* runtime_code) {
  pthread_mutex_lock(&g_setup_mu);
  if (!g_set_up) {
    g_tool_hooks = SetUpToolLocked(runtime_code);
    g_set_up = true;
  }
  const cilkprof_hooks_t* hooks = g_tool_hooks;
  pthread_mutex_unlock(&g_setup_mu);
  return hooks;
}

// The runtime's late-attach entry (cilkprof/runtime_abi.h), or null when the process
// has no runtime that provides it.
using SetHooksFunction = void (*)(const cilkprof_hooks_t*);
SetHooksFunction RuntimeSetHooks() {
  return reinterpret_cast<SetHooksFunction>(dlsym(RTLD_DEFAULT, "cilkprof_runtime_set_hooks"));
}

}  // namespace

const cilkprof_hooks_t* AttachHooks(const cilkprof_runtime_t* runtime) {
  if (runtime == nullptr) return nullptr;
  // Standby: no instrumentation cost until an attach installs the hooks (through the
  // runtime's late-attach entry, which then also replaces this answer if the runtime
  // starts after the attach).
  if (__atomic_load_n(&g_standby, __ATOMIC_ACQUIRE)) return nullptr;
  const cilkprof_hooks_t* hooks = SetUpTool(reinterpret_cast<const void*>(runtime->current_worker));
  if (hooks != nullptr) __atomic_store_n(&g_window_open, true, __ATOMIC_RELEASE);
  return hooks;
}

void SetStandby(bool standby) { __atomic_store_n(&g_standby, standby, __ATOMIC_RELEASE); }

void InstallWorkSpanHooks() {
  const SetHooksFunction set_hooks = RuntimeSetHooks();
  if (set_hooks == nullptr || g_state == nullptr) return;
  const cilkprof_hooks_t* hooks = SetUpTool(reinterpret_cast<const void*>(set_hooks));
  if (hooks == nullptr) return;
  pthread_mutex_lock(&g_state->flush_mu);
  // A new window, maybe to a new aggregator: it gets what is measured from now on, every
  // site declared again when it changes (as for a fork child).
  if (g_reporter != nullptr) g_reporter->ForgetSent(TakeSnapshot());
  g_last_send_ns = MonotonicNs();
  __atomic_store_n(&g_window_open, true, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_state->flush_mu);
  set_hooks(hooks);
}

void FlushWorkSpanForDetach() {
  SendLocked(true);
  __atomic_store_n(&g_window_open, false, __ATOMIC_RELEASE);
}

void RemoveWorkSpanHooks() {
  __atomic_store_n(&g_window_open, false, __ATOMIC_RELEASE);
  if (const SetHooksFunction set_hooks = RuntimeSetHooks(); set_hooks != nullptr) set_hooks(nullptr);
}

size_t AppendSnapshotFrames(std::vector<std::string>* frames) {
  if (g_reporter != nullptr) g_reporter->ForgetReceiver();
  return AppendFrames(frames);
}

size_t AppendFrames(std::vector<std::string>* frames) {
  if (g_reporter == nullptr || frames == nullptr || !WindowOpen()) return 0;
  std::string frame = g_reporter->NextFrame(TakeSnapshot(), EngineFailed());
  if (frame.empty()) return 0;
  frames->push_back(std::move(frame));
  return 1;
}

}  // namespace cilkprof::agent::workspan
