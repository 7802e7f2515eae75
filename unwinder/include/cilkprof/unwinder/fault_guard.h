// The fault guard: lets signal-context code read memory that may be unmapped.
//
// Initialize() (unwinder.h) installs SIGSEGV and SIGBUS handlers. While a thread runs
// a function under RunGuarded(), a fault on that thread jumps back into RunGuarded(),
// which returns kFaulted; the guarded function's frames are abandoned. Faults anywhere
// else are forwarded to the program's own handler as the kernel would deliver them.
//
// Contract for guarded functions: they must tolerate being abandoned at any load, so
// they hold no locks, own no resources and have no destructors that matter; results
// they want to survive a fault are written to caller-owned memory, each store ordered
// before the next possibly faulting load (std::atomic_signal_fence).
//
// Async-signal-safe. Costs one sigsetjmp without saving the signal mask: the guard's
// handlers run with SA_NODEFER and an empty sa_mask, so the mask at the fault is the
// mask at the jump target and nothing needs restoring.
#pragma once

#include <stdint.h>

namespace cilkprof::unwinder {

enum class GuardOutcome : uint8_t {
  kCompleted,   // fn returned normally
  kFaulted,     // fn touched unmapped or forbidden memory and was abandoned
};

// Runs fn(arg) with the fault guard armed on the calling thread. Before Initialize()
// installs the handlers a fault is not caught (the program's handler sees it). Guards
// nest: a signal handler may run a guarded function while the code it interrupted is
// inside RunGuarded (a fault is caught by the innermost guard, which then returns
// kFaulted; the interrupted guard stays armed).
GuardOutcome RunGuarded(void (*fn)(void* arg), void* arg);

// True while the calling thread is inside RunGuarded. Async-signal-safe.
bool InsideGuard();

}  // namespace cilkprof::unwinder
