// An alternate signal stack for every registered thread that has none, so that a stack
// overflow (deep or unbounded recursion) still reaches the last flush before the
// program dies of its SIGSEGV (docs/AGENT.md, "Crashes and kills").
//
// The handlers that need it ask for it with SA_ONSTACK: the unwinder's SIGSEGV/SIGBUS
// fault guard, which calls the last flush, and the agent's handler of the other fatal
// signals while the program keeps their default action (fatal_signals.cc). The
// sampling signal's handler does not: it runs on the interrupted stack, so a guarded
// fault inside the unwinder jumps from the alternate stack back to the sample
// handler's frame on the thread's own stack (the kernel tells "on the alternate
// stack" by the stack pointer alone, so leaving it with siglongjmp needs no undo).
//
// Never replaces one: a thread that already has an alternate stack (the program's, the
// Cilk runtime's, or ours inherited across fork) keeps it, and a program that calls
// sigaltstack later simply replaces ours (sigaltstack is not interposed: the kernel's
// per-thread setting is the whole truth, and ReleaseAltStack only disables it if it is
// still ours). The Cilk runtime, which installs one for its pool threads only when they
// have none, then uses ours; it is as large as the runtime's own.
#pragma once

namespace cilkprof::agent {

// Gives the calling thread an alternate signal stack of the agent's if it has none, or
// keeps the one it already owns (a fork child's thread: the kernel and the copied
// memory carry it over). Returns the agent's mapping that this thread owns (also when
// the program replaced it since), or nullptr. Not async-signal-safe (mmap).
void* ProvideAltStack();

// When the calling thread unregisters: disables the alternate stack if it is still
// ours and unmaps it. Leaves it mapped if the thread is running on it (pthread_exit
// from a signal handler that runs there): the only case in which one is left behind.
void ReleaseAltStack();

// A fork child: unmaps the copy of the alternate stack of a thread that does not
// exist in the child (the mapping `ProvideAltStack` returned in the parent).
void UnmapInheritedAltStack(void* mapping);

}  // namespace cilkprof::agent
