/* The interface between a task-parallel runtime and Cilkprof's agent.
 *
 * A runtime (scheduler_patch/cilk, later OMPT adapters) exposes three things here:
 *   1. a per-thread worker record: the scheduler state word and the innermost stack
 *      segment (fiber) of the strand now running, for the sampling signal handler;
 *   2. global counters: workers, workers working;
 *   3. a hook table for instrumentation tools (work/span), called on scheduling events;
 *   4. (issue 16) an optional event table for timeline tools: steals and sync waits.
 *
 * Discovery. At start-up the runtime calls cilkprof_tool_attach() if a tool defines it
 * (the agent, preloaded, does; the runtime declares it weak, so programs link and run
 * without any tool). The tool keeps the cilkprof_runtime_t pointer for the life of the
 * process and returns its hook table, or NULL for none.
 *
 * Late attach. A tool that arrives after the runtime started (attached to a standby
 * agent, or injected with ptrace) finds the runtime with
 * dlsym(RTLD_DEFAULT, "cilkprof_runtime_view") and installs or removes its hooks with
 * cilkprof_runtime_set_hooks (both below, exported by the runtime library). A change of
 * hooks takes effect only at a moment when no top-level computation (root) runs, so a
 * tool sees whole computations, never part of one. A runtime whose weak reference to
 * cilkprof_tool_attach was not bound (the tool was dlopen()ed after the runtime
 * library) looks the symbol up with dlsym at its start instead.
 *
 * Costs with no tool loaded: each hot-path hook site is one load of a global pointer
 * and a predictable branch (CILKPROF_HOOK below). Nothing else.
 *
 * Signal safety. Everything a signal handler reads (cilkprof_worker_t, the segments,
 * the counters) is plain memory readable from the interrupted thread itself: no locks,
 * no allocation, no TLS look-ups that may allocate (current_worker() uses initial-exec
 * TLS). Writers publish with release stores in the order documented per field, so a
 * handler that interrupts the writer sees either the old or the new consistent value.
 */
#ifndef CILKPROF_RUNTIME_ABI_H_
#define CILKPROF_RUNTIME_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CILKPROF_RUNTIME_ABI_VERSION 2u

/* The scheduler state of a worker thread, as the sampler sees it. */
typedef enum cilkprof_worker_state {
  CILKPROF_STATE_NOT_A_WORKER = 0, /* thread not (or not yet) running the runtime      */
  CILKPROF_STATE_WORKING = 1,      /* running user code of some strand                  */
  CILKPROF_STATE_IDLE = 2,         /* looking for work (stealing) or sleeping           */
  CILKPROF_STATE_OVERHEAD = 3      /* spawn, sync, steal, fiber-switch bookkeeping      */
  /* The agent adds its own lock-wait state (4) in its own word, never here. */
} cilkprof_worker_state_t;

/* Registers of a spawn point on x86-64: enough for a DWARF or frame-pointer unwinder
 * to continue in the spawning function and then its callers. pc is the address just
 * after the call into the runtime's spawn (a return address, like any caller frame). */
typedef struct cilkprof_saved_regs {
  uintptr_t pc, sp, fp;
  uintptr_t rbx, r12, r13, r14, r15;
} cilkprof_saved_regs_t;

/* One stack segment of the cactus stack: a fiber on which a spawned child runs, or
 * the native stack of the thread that entered the runtime.
 *
 * Logical unwinding: unwind the running strand's frames until a pc falls inside
 * [entry_lo, entry_hi) (the runtime trampoline at the bottom of this fiber) or the
 * stack pointer leaves [stack_lo, stack_hi); then continue from `spawn` in `parent`,
 * and so on. A segment and the frames its spawn registers point into stay valid while
 * any descendant segment runs (a spawning function cannot return before it syncs).
 * The root segment of a computation has parent == NULL and describes the stack on
 * which cilk::run (or the first spawn) was entered; the unwinder continues there with
 * ordinary physical unwinding up to main. */
typedef struct cilkprof_segment {
  const struct cilkprof_segment* parent;
  uintptr_t stack_lo, stack_hi;   /* usable stack bounds of this fiber            */
  uintptr_t entry_lo, entry_hi;   /* code range of the fiber's entry trampoline   */
  cilkprof_saved_regs_t spawn;    /* registers at the spawn point, in `parent`    */
} cilkprof_segment_t;

/* Per worker thread. Written only by its own thread; read by that thread's signal
 * handler (and, racily and harmlessly, by tools on other threads).
 * Fiber switches: the runtime sets state = OVERHEAD, switches, stores the new
 * `segment`, then sets state back; a sample taken in between is an OVERHEAD sample.
 * tool_path: nonzero while the worker runs a path of the runtime that the program
 * takes only because a tool is attached (the cilk-model runtime: entering a scope
 * that is not the computation's root, and syncing or leaving one with no child out
 * and no exception recorded, through the library instead of inline code). A sampler
 * charges such samples to the tool, not to the program. Set and cleared on the same
 * worker: never around code that may switch the strand to another worker (a sync
 * that may park). */
typedef struct cilkprof_worker {
  volatile uint32_t state;                    /* cilkprof_worker_state_t            */
  uint32_t worker_id;                         /* 0 .. workers-1                     */
  const cilkprof_segment_t* volatile segment; /* innermost running segment, or NULL */
  volatile uint32_t tool_path;                /* 1: the runtime's tool-only path    */
} cilkprof_worker_t;

/* ---- Instrumentation hooks (work/span tools). ----
 * `frame` identifies one cilk::scope instance (a Cilk frame) and lives as long as the
 * scope; `tool_data` inside it belongs to the tool. `callsite` is the return address of
 * the user's call into the runtime entry point (the spawn, sync or scope site). Hooks
 * run on the worker that executes the event, in the order: scope_enter, then per
 * spawn: spawn (parent strand ends) -> the child runs -> child_end (on the child's
 * worker) -> continuation (on whichever worker resumes the parent); sync_begin ->
 * sync_end (after every child of the scope has ended); scope_exit.
 *
 * Call sites (ABI version 2). A scope is inlined into the function that holds it, so
 * scope_enter also gets `caller`: that function's own return address, the address
 * after the call instruction in its caller (the call site of the thesis). spawn gets
 * `callable`: the entry address of the function the runtime calls on the child's
 * fiber (the spawned lambda's operator(), or the library's type-erased thunk), so a
 * tool can tell the spawned callable's own calls (part of the spawn) from calls made
 * deeper down.
 *
 * Function hooks. Code compiled with -finstrument-functions calls the runtime's
 * __cyg_profile_func_enter/exit, which forward to func_enter/func_exit on the thread
 * that runs the function: `function` is its entry address, `caller` its return
 * address. Exits pair with entries in LIFO order per strand, except that a function
 * left by an exception may, depending on the compiler, have no exit call (clang). A
 * function may enter on one worker and exit on another (its continuation was stolen).
 * The runtime forwards them only between its start-up and exit; calls outside any
 * Cilk computation are forwarded too (the tool decides). */
typedef struct cilkprof_frame {
  void* tool_data[2];
} cilkprof_frame_t;

typedef struct cilkprof_hooks {
  void (*scope_enter)(cilkprof_frame_t* frame, const void* callsite, const void* caller);
  void (*spawn)(cilkprof_frame_t* frame, const void* callsite, const void* callable);
  void (*child_end)(cilkprof_frame_t* frame);
  void (*continuation)(cilkprof_frame_t* frame);
  void (*sync_begin)(cilkprof_frame_t* frame, const void* callsite);
  void (*sync_end)(cilkprof_frame_t* frame);
  void (*scope_exit)(cilkprof_frame_t* frame);
  void (*func_enter)(const void* function, const void* caller);
  void (*func_exit)(const void* function, const void* caller);
} cilkprof_hooks_t;

/* What the runtime shows a tool. Static storage, valid for the life of the process. */
typedef struct cilkprof_runtime {
  uint32_t abi_version;                /* CILKPROF_RUNTIME_ABI_VERSION             */
  const char* name;                    /* "cilk-model", ...                         */
  const volatile uint32_t* workers;    /* number of worker threads started          */
  /* Workers not IDLE (WORKING or OVERHEAD). Counting WORKING alone would cost two
   * shared-counter updates per spawn; OVERHEAD is short, so n_idle = workers - working
   * is what idleness blame needs. */
  const volatile uint32_t* working;
  /* The calling thread's worker record, or NULL if it is not a worker. Async-signal-
   * safe. */
  cilkprof_worker_t* (*current_worker)(void);
} cilkprof_runtime_t;

/* Defined by a tool (the agent). Called once by the runtime during its initialization,
 * before any worker runs user code, on the thread that starts the runtime. Returns the
 * tool's hooks (static storage) or NULL. */
const cilkprof_hooks_t* cilkprof_tool_attach(const cilkprof_runtime_t* runtime)
    __attribute__((weak));

/* ---- Late attach (defined by the runtime; found with dlsym, no version bump). ---- */

/* The runtime's view if the runtime has started in this process (cilkprof_tool_attach
 * has been called, or would have been), else NULL. Never starts the runtime. Static
 * storage, valid for the life of the process. Not async-signal-safe. */
const cilkprof_runtime_t* cilkprof_runtime_view(void);

/* Records `hooks` (static storage; NULL removes the hooks) as the runtime's hook table,
 * function hooks included, from the next moment at which no top-level computation
 * (root) runs:
 *   - at once, if none runs now (before the runtime starts: at its start, in place of
 *     what cilkprof_tool_attach returns);
 *   - else when the last running root ends (after its scope_exit), or when a root
 *     begins while no other runs (before its scope_enter), whichever comes first.
 * So the hooks see no event of a computation that began before they were installed,
 * and after a removal took effect, no event at all; a removal never cuts a computation
 * short. The last call wins when several wait. Under roots that overlap without end
 * (only possible if a runtime runs several roots at once; the cilk-model runtime runs
 * one at a time, so each root's end is such a moment) the change waits until they stop.
 * Cost: the runtime reads one flag at each root's begin and end; spawn and sync pay
 * nothing. Takes a mutex: never call it from a signal handler, a hook, or inside
 * cilkprof_tool_attach. The tool must keep its previous table's code alive until the
 * change took effect (a tool in a loaded library keeps it for the process' life). */
void cilkprof_runtime_set_hooks(const cilkprof_hooks_t* hooks);

/* ---- Scheduling events (issue 16; defined by the runtime, found with dlsym). ----
 * For a tool that draws a timeline: the runtime tells it, on the thread where each
 * happens, when a worker steals and when a sync starts and stops waiting for stolen
 * children. Separate from the hooks: a tool may want the events without instrumenting
 * work and span (the sampled run of `cilkprof run --workspan=separate`), and they are
 * installed and removed at any moment, not only between computations.
 *   steal            on the thief, after it took work: the thief's and the victim's
 *                    worker ids (the victim of a CILK_FORCE_STEAL hand-off is the
 *                    worker that posted it);
 *   sync_wait_begin  on the worker whose strand parks at a sync because a child is
 *                    still out;
 *   sync_wait_end    on the worker that resumes that strand (another one, if the last
 *                    child ended there), before the code after the sync runs.
 * Callbacks run in the scheduler (state OVERHEAD or IDLE) and must be short: no
 * blocking, no call back into the runtime. Spawns and syncs that need not wait pay
 * nothing; each event site is one load of a global pointer and a predictable branch.
 * `size` is sizeof(cilkprof_events_t) as the tool compiled it: a runtime calls only
 * the callbacks that lie within it (later versions add fields at the end, never
 * change these). A NULL callback is skipped.
 *
 * Older runtimes do not define cilkprof_runtime_set_events: a tool that finds no such
 * symbol simply gets no events (no ABI version change). */
typedef struct cilkprof_events {
  uint32_t size;
  void (*steal)(uint32_t thief, uint32_t victim);
  void (*sync_wait_begin)(uint32_t worker);
  void (*sync_wait_end)(uint32_t worker);
} cilkprof_events_t;

/* Installs `events` (static storage; NULL removes them) at once. Callbacks already
 * running may finish after the call returns: the tool keeps the table's code alive
 * for the process' life (a tool in a loaded library does). Lock-free; not for signal
 * handlers. */
void cilkprof_runtime_set_events(const cilkprof_events_t* events);

#ifdef __cplusplus
}  /* extern "C" */
#endif

/* For runtimes: call an event callback only when a tool installed one. `events` is the
 * runtime's `const cilkprof_events_t*`, read once (one load, a predictable branch). */
#define CILKPROF_EVENT(events, name, ...)                                          \
  do {                                                                             \
    const cilkprof_events_t* cilkprof_e_ = (events);                               \
    if (__builtin_expect(cilkprof_e_ != 0, 0) && cilkprof_e_->name &&              \
        __builtin_offsetof(cilkprof_events_t, name) < cilkprof_e_->size)           \
      cilkprof_e_->name(__VA_ARGS__);                                              \
  } while (0)

/* For runtimes: call a hook only when a tool installed one. `hooks` is the runtime's
 * global `const cilkprof_hooks_t*`. One load and a predictable branch. */
#define CILKPROF_HOOK(hooks, name, ...)                                   \
  do {                                                                    \
    const cilkprof_hooks_t* cilkprof_h_ = (hooks);                        \
    if (__builtin_expect(cilkprof_h_ != 0, 0) && cilkprof_h_->name)       \
      cilkprof_h_->name(__VA_ARGS__);                                     \
  } while (0)

#endif /* CILKPROF_RUNTIME_ABI_H_ */
