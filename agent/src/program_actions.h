// What the program believes is installed for the signals whose kernel action is the
// agent's (the sampling signal, the signals it may die of: fatal_signals.h), and
// running the program's action as the kernel would have (docs/AGENT.md, "fork, exec
// and the profiling signal").
//
// The interposed sigaction() and signal() write here, and POSIX lets a program call
// them from its own signal handlers: in a handler that interrupted the very same call
// on the same thread, in a handler that interrupted the agent's flusher, or while
// other threads do the same. So everything here is async-signal-safe and lock-free:
// no malloc, no mutex, no logging. The program's actions live in one
// unwinder::PublishedAction per signal (a reader always copies one complete action;
// every store gets a new version), and the kernel's action is brought in line with
// the program's by SyncKernelAction, which applies the newest view until no store
// happened meanwhile: whichever of several racing writers finishes last, the kernel
// ends up with the action of the last store.
#pragma once

#include <signal.h>

#include <cstdint>

namespace cilkprof::agent {

// Installs in the kernel what signal `signo` needs while the program believes `view`
// is installed; returns sigaction()'s result. Async-signal-safe.
using KernelActionFn = int (*)(int signo, const struct sigaction& view);

// The program's action for `signo` (SIG_DFL if never stored) and its version.
uint64_t LoadProgramAction(int signo, struct sigaction* out);
// Stores the program's new action; the one it replaces goes to *previous (may be null).
void StoreProgramAction(int signo, const struct sigaction& action, struct sigaction* previous);
// Gives the current action a new version without changing it, so that a writer that
// applied the older version to the kernel applies it again (after the agent changed
// what `apply` installs for it).
void RepublishProgramAction(int signo);
// Applies the program's action with `apply` until no store changed it meanwhile;
// returns the last result of `apply`.
int SyncKernelAction(int signo, KernelActionFn apply);

bool IsDefaultAction(const struct sigaction& action);
bool IsIgnoreAction(const struct sigaction& action);
// SIGCHLD, SIGCONT, SIGURG, SIGWINCH: their default action is to do nothing.
bool DefaultActionIgnores(int signo);

// Calls the program's handler `action` (of version `version`) as the kernel would
// have: under its sa_mask, with the signal blocked unless SA_NODEFER, with siginfo if
// SA_SIGINFO; SA_RESETHAND stores SIG_DFL first (unless the program stored another
// action meanwhile) and applies it with `apply`.
void CallProgramHandler(int signo, siginfo_t* info, void* context, const struct sigaction& action,
                        uint64_t version, KernelActionFn apply);

// The default action, now: SIG_DFL back in the kernel, then the fault again (SIGFPE,
// SIGILL raised by an instruction: returning re-executes it) or the signal again, to
// this thread with the same siginfo, blocked until the handler returns so that it is
// delivered at the interrupted instruction. Same signal, same exit status, same core.
void DieAsTheDefaultWould(int signo, siginfo_t* info);

}  // namespace cilkprof::agent
