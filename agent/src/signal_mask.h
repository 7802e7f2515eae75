// Keeping the sampling signal deliverable when the program blocks signals (issue 11;
// docs/AGENT.md, "Signal masks").
//
// Programs block signals wholesale: xz blocks every signal around pthread_create so
// that its workers start with a full mask, daemons block everything and take signals
// with sigwait. A thread with the sampling signal blocked is never sampled. So the
// sampling signal behaves like SIGKILL and SIGSTOP, which the kernel silently refuses
// to block: the interposed mask functions (interpose.cc) take it out of every set the
// program asks to block (SIG_BLOCK, SIG_SETMASK, sigblock, sigsetmask, the sa_mask of
// its handlers), and a thread the agent registers starts with it unblocked. The old
// masks the program reads back are the kernel's, so the program sees what is really
// blocked. Unblocking (SIG_UNBLOCK) is never changed.
//
// Calls made by the code the handler itself runs (the agent, and libunwind, which
// blocks every signal around its own locks and loader calls) go to libc unchanged.
//
// Temporary masks that only last while the thread waits (sigsuspend, pselect, ppoll,
// epoll_pwait) are left alone: a waiting thread uses no CPU, and a sample that comes
// due while it waits is delivered when the call returns, at the same call path and
// with the whole elapsed time as its weight; taking the signal out would instead wake
// the program's wait early, which it blocked signals to prevent. The sets of
// sigwait, sigwaitinfo, sigtimedwait and signalfd lose the sampling signal (unless it
// is all they name), so the program never receives a sample as its own signal.
//
// Everything here is async-signal-safe (programs change masks in signal handlers): no
// allocation, no lock, only relaxed atomic loads and the sigset functions.
#pragma once

#include <signal.h>
#include <ucontext.h>

namespace cilkprof::agent {

// The signal the masks keep open: the sampling signal while the agent's handler is
// installed on it, 0 otherwise (inactive, or the signal handed back to the program).
void SetKeptSignal(int signo);
int KeptSignal();

// What to pass to pthread_sigmask/sigprocmask for the program's request: `set` itself,
// or `*scratch` holding a copy without the kept signal. `caller` is the return address
// of the interposed function.
const sigset_t* ProgramMaskRequest(int how, const sigset_t* set, sigset_t* scratch,
                                   const void* caller);
// The same for a BSD mask of signals 1..31 (sigblock, sigsetmask).
int ProgramBsdMask(int mask, const void* caller);
// The set of a sigwait-style call: without the kept signal unless it is the only one.
const sigset_t* ProgramWaitSet(const sigset_t* set, sigset_t* scratch, const void* caller);
// Takes the kept signal out of a handler's sa_mask (the program's action for another
// signal). `act` may be null.
const struct sigaction* ProgramAction(const struct sigaction* act, struct sigaction* scratch);

// Unblocks the kept signal on the calling thread (a thread created with a blocked mask
// inherited through a path the interposition does not see, or started by exec with one).
void OpenKeptSignalOnThisThread();
// True when the kept signal is blocked on the calling thread.
bool KeptSignalBlockedOnThisThread();

// In the sampling handler: the unwinder's fault guard turns a fault while reading a
// bad stack into a partial unwind, but a fault whose signal is blocked kills the
// process instead. When the interrupted code had SIGSEGV or SIGBUS blocked (xz's
// workers block every signal), unblocks them until the handler returns (sigreturn
// restores the interrupted mask): one system call per sample, in those threads only.
void OpenFaultSignalsInHandler(const ucontext_t* interrupted);

// The same for a walk outside any handler, from a getcontext() context (which holds the
// thread's mask): a synchronous sample at a thread's end, a probe, a lock charge. Opens
// SIGSEGV and SIGBUS for the scope if the thread blocks them, and blocks them again at
// its end: two system calls, in those threads only.
class FaultSignalsOpen {
 public:
  explicit FaultSignalsOpen(const ucontext_t* context);
  ~FaultSignalsOpen();
  FaultSignalsOpen(const FaultSignalsOpen&) = delete;
  FaultSignalsOpen& operator=(const FaultSignalsOpen&) = delete;

 private:
  sigset_t reopened_;
  bool changed_ = false;
};

// Where libunwind's code lies; called once at start-up, before the first sample.
void FindUnwindLibrary();
// True for a call made by the agent's code or libunwind's (the code the sampling
// handler runs): the interposed lock functions leave those calls alone.
// Async-signal-safe.
bool CalledFromHandlerCode(const void* caller);

}  // namespace cilkprof::agent
