// Signals that end the process (fatal_signals.h).
#include "fatal_signals.h"

#include <string.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "agent_state.h"
#include "crash_flush.h"
#include "program_actions.h"
#include "real_functions.h"
#include "signal_mask.h"

namespace cilkprof::agent {
namespace {

constexpr int kWatched[] = {SIGABRT, SIGFPE,  SIGILL,  SIGQUIT, SIGSYS,  SIGXCPU,
                            SIGXFSZ, SIGTERM, SIGINT,  SIGHUP,  SIGPIPE, SIGALRM};

// Set once at start-up for the signals whose handler the agent installed (or left
// ignored); what the program believes is installed lives in program_actions.h.
std::atomic<bool> g_watched[_NSIG];

void FatalSignalHandler(int signo, siginfo_t* info, void* context);

// The agent's handler in front of the program's `view` (SA_RESTART and SA_ONSTACK as
// the program asked: they change what its code and handler see), or SIG_IGN in the
// kernel when the program ignores the signal. SA_NODEFER with an empty mask: the
// program's mask is applied by CallProgramHandler. With the default action only the
// agent's last flush runs, on the alternate stack (alt_stack.h): the signal may come
// from a thread whose stack is all but used up (abort() from deep recursion).
int ApplyToKernel(int signo, const struct sigaction& view) {
  if (IsIgnoreAction(view)) return real::sigaction()(signo, &view, nullptr);
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = FatalSignalHandler;
  ours.sa_flags = SA_SIGINFO | SA_NODEFER | (view.sa_flags & (SA_RESTART | SA_ONSTACK)) |
                  (IsDefaultAction(view) ? SA_ONSTACK : 0);
  sigemptyset(&ours.sa_mask);
  return real::sigaction()(signo, &ours, nullptr);
}

void FatalSignalHandler(int signo, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  struct sigaction view;
  const uint64_t version = LoadProgramAction(signo, &view);
  if (IsDefaultAction(view)) {
    CrashFlush(signo);  // does nothing when the agent is inactive
    DieAsTheDefaultWould(signo, info);
  } else if (!IsIgnoreAction(view)) {
    CallProgramHandler(signo, info, context, view, version, ApplyToKernel);
  }
  errno = saved_errno;
}

// The unwinder's fault guard is about to let SIGSEGV or SIGBUS kill the process.
void BeforeFatalFault(int signo, const siginfo_t*) { CrashFlush(signo); }

}  // namespace

bool WatchesFatalSignal(int signo) {
  if (signo <= 0 || signo >= _NSIG || !g_watched[signo].load(std::memory_order_acquire)) {
    return false;
  }
  return g_state == nullptr || signo != __atomic_load_n(&g_state->sampler.signo, __ATOMIC_RELAXED);
}

void InstallFatalSignalHandlers() {
  PrepareCrashFlush();
  for (int signo : kWatched) {
    if (signo == g_state->sampler.signo) continue;
    struct sigaction current;
    if (real::sigaction()(signo, nullptr, &current) != 0) continue;
    StoreProgramAction(signo, current, nullptr);
    // An inherited SIG_IGN stays in the kernel (fatal_signals.h).
    if (!IsIgnoreAction(current) && ApplyToKernel(signo, current) != 0) continue;
    g_watched[signo].store(true, std::memory_order_release);
  }
  unwinder::SetDefaultActionHook(BeforeFatalFault);
}

void UninstallFatalSignalHandlers() {
  for (int signo : kWatched) {
    if (!g_watched[signo].load(std::memory_order_acquire)) continue;
    // The program's action as it stands (its own sigaction calls kept it up to date),
    // then no more watching: a sigaction of the program after this goes to the kernel.
    struct sigaction view;
    LoadProgramAction(signo, &view);
    real::sigaction()(signo, &view, nullptr);
    g_watched[signo].store(false, std::memory_order_release);
  }
}

int FatalSignalSigaction(int signo, const struct sigaction* act, struct sigaction* old) {
  struct sigaction previous;
  if (act == nullptr) {
    if (old != nullptr) LoadProgramAction(signo, old);
    return 0;
  }
  // The program's handlers run with the sampling signal open (signal_mask.h).
  struct sigaction scratch;
  StoreProgramAction(signo, *ProgramAction(act, &scratch), &previous);
  const int rc = SyncKernelAction(signo, ApplyToKernel);
  if (rc != 0) {
    const int saved_errno = errno;
    StoreProgramAction(signo, previous, nullptr);  // the kernel refused: nothing changes
    SyncKernelAction(signo, ApplyToKernel);
    errno = saved_errno;
    return rc;
  }
  if (old != nullptr) *old = previous;
  return 0;
}

}  // namespace cilkprof::agent
