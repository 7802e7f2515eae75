// Signals that end the process: the agent's last flush before the program dies of one
// (docs/AGENT.md, "Crashes and kills").
//
// The agent watches the signals whose default action ends the process and that
// programs die of: SIGABRT, SIGFPE, SIGILL, SIGQUIT, SIGSYS, SIGXCPU, SIGXFSZ (with a
// core dump), SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGALRM (without). SIGSEGV and SIGBUS
// belong to the unwinder's fault guard, which calls the same last flush just before a
// fault kills the process (unwinder::SetDefaultActionHook). The sampling signal is
// never watched, and neither is a signal the program inherited as ignored (nohup's
// SIGHUP, a background job's SIGINT): that stays SIG_IGN in the kernel, so exec'd
// programs inherit it and the kernel discards it as before.
//
// For a watched signal the kernel runs the agent's handler; the program sees (through
// the interposed sigaction and signal) and gets what it asked for:
//   SIG_DFL       the handler makes the last flush (crash_flush.h), restores SIG_DFL
//                 and lets the signal kill the process as it would have: a fault
//                 (SIGFPE, SIGILL raised by an instruction) is re-executed by
//                 returning, any other signal is sent again to the same thread with
//                 the same siginfo, blocked until the handler returns, so that it is
//                 delivered at the interrupted instruction. Same signal, same exit
//                 status, same core dump (of the program's own registers).
//   a handler     the handler calls it as the kernel would have (its sa_mask and
//                 SA_NODEFER, SA_RESETHAND, SA_SIGINFO honoured) and flushes nothing:
//                 a handler that returns keeps the process alive, one that calls
//                 exit() or _exit() is covered by those paths, and one that restores
//                 SIG_DFL and re-raises reaches the case above.
//   SIG_IGN       installed as SIG_IGN in the kernel.
// With the agent inactive (a fork child with CILKPROF_FOLLOW_FORK=0, after shutdown)
// the handler only does the above without flushing.
#pragma once

#include <signal.h>

namespace cilkprof::agent {

// True for the signals above. Async-signal-safe.
bool WatchesFatalSignal(int signo);

// At start-up, after the sampling signal is chosen: installs the agent's handler for
// each watched signal (except those left as they are, above) and the fault guard's
// hook for SIGSEGV and SIGBUS. Not signal-safe.
void InstallFatalSignalHandlers();
// A standby agent's detach (standby.h): the program's own actions back in the kernel
// for every watched signal. Not signal-safe.
void UninstallFatalSignalHandlers();

// The program's sigaction for a watched signal (interpose.cc): records its action and
// keeps the agent's handler installed in front of it (or SIG_IGN in the kernel).
// Async-signal-safe and lock-free, also in a handler that interrupted another
// sigaction on the same thread (program_actions.h).
int FatalSignalSigaction(int signo, const struct sigaction* act, struct sigaction* old);

}  // namespace cilkprof::agent
