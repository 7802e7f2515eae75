// Knowing, in the signal handler, that a sample interrupted the work/span tool's own
// code (issue 13, "Sampling untouched by instrumentation"; docs/WORKSPAN.md,
// "Instrumentation and the sampled profile").
//
// How: a per-thread depth, in initial-exec TLS, that every entry point of the tool
// raises for the time it runs (InstrumentationScope: every hook of the work/span
// engine's table through InstrumentedCall below, and the program API in
// workspan/api.cc). The handler runs
// on the interrupted thread and reads it with one TLS load.
//
// Why not a dedicated text section for the tool with __start_/__stop_ bounds checked
// against the innermost frames: the hooks spend their time in code outside any section
// of ours too (clock_gettime in the vDSO, memcpy and memset in libc, mmap in the
// pool, the protobuf-free encoder and the transport when a top-level computation
// ends), so a check of the innermost pc would miss those samples, and checking more
// frames would need the unwind first and still guess where to stop. The depth is
// exact for everything the hook calls, whatever its module, costs a TLS load and store
// on the way in and out of each hook (no atomic read-modify-write: only the owner
// thread writes it, its own signal handler only reads it), and is async-signal-safe to
// read. It relies on the runtime ABI's rule that a hook returns on the thread that
// called it (hooks never switch fibers). A depth, not a
// flag, so that nested entry points (a hook that ends a top-level computation and
// sends, the program API called from code the tool runs) unwind correctly.
#pragma once

#include <cstdint>

namespace cilkprof::agent {

// Written only by the owner thread (InstrumentationScope); read by its signal handler.
extern __thread uint32_t tls_instrumentation_depth __attribute__((tls_model("initial-exec")));

// Async-signal-safe: one TLS load.
inline bool InInstrumentation() { return __atomic_load_n(&tls_instrumentation_depth, __ATOMIC_RELAXED) != 0; }

// Marks the current thread as running the tool's code for the life of the object. The
// signal fences keep the compiler from moving the tool's work outside the marked span
// (the reader is a signal handler on the same thread, so no hardware fence is needed).
class InstrumentationScope {
 public:
  InstrumentationScope() {
    __atomic_store_n(&tls_instrumentation_depth, __atomic_load_n(&tls_instrumentation_depth, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
  }
  ~InstrumentationScope() {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&tls_instrumentation_depth, __atomic_load_n(&tls_instrumentation_depth, __ATOMIC_RELAXED) - 1,
                     __ATOMIC_RELAXED);
  }
  InstrumentationScope(const InstrumentationScope&) = delete;
  InstrumentationScope& operator=(const InstrumentationScope&) = delete;
};

// InstrumentedCall<F>::Call: F, called inside an InstrumentationScope, with F's own
// signature. F is a constant, so the compiler inlines it into Call: marking a hook
// costs two TLS stores, no extra call (a wrapper calling through a table cost fib
// about 9%). The work/span engine builds its hook table of these (engine.cc).
template <auto F>
struct InstrumentedCall;

template <typename R, typename... Args, R (*F)(Args...)>
struct InstrumentedCall<F> {
  static R Call(Args... args) {
    InstrumentationScope in_tool;
    return F(args...);
  }
};

// Code that runs only for the tool but that no InstrumentationScope can cover, by
// address: the engine's hook functions' own instructions before they raise the depth
// and after they lower it (their prologue takes the cost of the call into the tool:
// about half of their samples), and the runtime's forwarders of function hooks
// (__cyg_profile_func_enter/exit in libcilk, which run before any hook). A sample
// whose interrupted pc lies in such a range is instrumentation. The runtime's own
// tool-only paths (a library scope entry, sync or exit that inline code would have
// done) are marked by the runtime instead (cilkprof_worker_t::tool_path): whether they
// are the tool's depends on the scope, not on the address.
//
// AddToolCode: not async-signal-safe and not thread-safe; called before the code it
// names can run (the runtime's attach, on the one thread starting the runtime). At most
// kMaxToolCodeRanges ranges; returns false (and adds nothing) beyond. A range already
// present is not added twice.
inline constexpr int kMaxToolCodeRanges = 16;
bool AddToolCode(uintptr_t lo, uintptr_t hi);

// Async-signal-safe: reads the published ranges without locks.
bool InToolCode(uintptr_t pc);

// What a sample of a thread is charged as (blame.h). Instrumentation comes first: the
// tool's hooks run in the runtime's OVERHEAD state (and may run in others), and the
// time they take is neither the program's work nor the scheduler's overhead, nor does
// it make the other workers' idleness the user's business.
enum class SampleKind : uint8_t {
  kWork,             // work (and idleness blame) at the logical path
  kOverhead,         // overhead (and idleness blame) at the spawn or sync site
  kIdle,             // not in the tree: idle_samples and idle_ns
  kInstrumentation,  // instrumentation at the logical path, nothing else
};

// `state`: the runtime's worker state word (cilkprof_worker_state_t), or
// CILKPROF_STATE_NOT_A_WORKER. Async-signal-safe.
SampleKind ClassifySample(uint32_t state, bool in_instrumentation);

}  // namespace cilkprof::agent
