// Stack unwinding for the sampling signal handler.
//
// Signal-safety contract: Unwind() is async-signal-safe. It does not allocate, take
// locks the interrupted code may hold, log, or throw. It may be called from a signal
// handler on the interrupted thread, with the handler's ucontext. Initialize() and
// PrepareThread() are not signal-safe and must run before the first Unwind() of the
// process / of the calling thread.
//
// A fault while reading the stack (a corrupt frame, a stack pointer into unmapped
// memory) does not crash the program: the unwind stops, keeps the frames it has and
// reports partial = true.
//
// Frames come innermost first. frames[0].pc is the interrupted pc itself; every
// later frame's pc is its return address minus one, so that it falls inside the call
// instruction and symbolizes to the line of the call. (One exception: the frame right
// above a signal trampoline, i.e. code interrupted by another signal, keeps its exact
// pc, because it was interrupted, not calling.)
//
// The building blocks (per-mode cursors that start from a ucontext or from a spawn
// point's saved registers, and the fault guard itself) are in cursor.h and
// fault_guard.h, for the logical (segment-splicing) unwinder built on top.
#pragma once

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

namespace cilkprof::unwinder {

enum class Mode : uint8_t {
  kDwarf,         // libunwind (nongnu), DWARF CFI: correct for any code with unwind tables
  kFramePointer,  // follow rbp chains: fast, for programs built with -fno-omit-frame-pointer
};

// How a frame was entered from its caller (the next frame outward).
// kTask: the frame runs an OpenMP task created at the next (outer) frame's site
// (issue 17, docs/OPENMP.md).
enum class Edge : uint8_t { kCall = 0, kSpawn = 1, kTask = 2 };

struct Frame {
  uintptr_t pc;
  Edge edge;
};

struct UnwindResult {
  uint32_t depth = 0;       // frames written
  bool partial = false;     // stopped before the outermost frame (fault, bad frame, no CFI)
  bool truncated = false;   // stopped because max_frames was reached
};

// Once per process, before any thread samples. Installs the fault guard (SIGSEGV and
// SIGBUS handlers that chain to the program's own) and tunes libunwind for signal
// context use. Returns false and fills `error` (static string) on failure.
bool Initialize(const char** error);

// Once per thread before its first sample (touches libunwind's per-thread state and
// the fault guard's thread-local slot so that the handler never initializes them).
void PrepareThread();

// Unwinds the thread interrupted with `context` (the third argument of an SA_SIGINFO
// handler). Async-signal-safe.
UnwindResult Unwind(Mode mode, const ucontext_t* context, Frame* frames, uint32_t max_frames);

// For programs that replace SIGSEGV/SIGBUS handlers after start-up: the agent's
// sigaction interposer calls this so that the fault guard stays first and forwards
// faults that did not happen inside Unwind() to `handler`; the handler it replaces goes
// to *previous (if not null), in the same atomic step. Async-signal-safe and lock-free
// (programs call sigaction from their signal handlers: published_action.h).
void SetChainedFaultHandler(int signo, const struct sigaction* handler,
                            struct sigaction* previous = nullptr);
// The handler faults are forwarded to now (the program's, as captured by Initialize()
// or set later): what the interposer returns as `oldact`. False if `signo` is not a
// guard signal or the guard is not installed. Async-signal-safe.
bool GetChainedFaultHandler(int signo, struct sigaction* handler);
bool IsFaultGuardSignal(int signo);
// Called when a fault the guard forwards is about to kill the process with the default
// action (the program has no handler for it, or its handler restored SIG_DFL and
// raised it again), just before: the agent's last flush. Async-signal-safe, like
// `hook` must be. Null removes it.
void SetDefaultActionHook(void (*hook)(int signo, const siginfo_t* info));

}  // namespace cilkprof::unwinder
