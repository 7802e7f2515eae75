// The program's view of the signals the agent handles (program_actions.h).
#include "program_actions.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cilkprof/unwinder/published_action.h"
#include "real_functions.h"

namespace cilkprof::agent {
namespace {

// Constant-initialized, never destroyed: handlers may run while the process exits.
// One slot per signal number; most are never used (zero pages).
unwinder::PublishedAction g_actions[_NSIG];

bool Valid(int signo) { return signo > 0 && signo < _NSIG; }

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

}  // namespace

uint64_t LoadProgramAction(int signo, struct sigaction* out) {
  if (!Valid(signo)) {
    memset(out, 0, sizeof *out);
    out->sa_handler = SIG_DFL;
    return 0;
  }
  return g_actions[signo].Load(out);
}

void StoreProgramAction(int signo, const struct sigaction& action, struct sigaction* previous) {
  if (Valid(signo)) g_actions[signo].Exchange(action, previous);
}

void RepublishProgramAction(int signo) {
  if (!Valid(signo)) return;
  for (;;) {
    struct sigaction current;
    const uint64_t version = g_actions[signo].Load(&current);
    if (g_actions[signo].CompareExchange(version, current)) return;
  }
}

int SyncKernelAction(int signo, KernelActionFn apply) {
  if (!Valid(signo)) return -1;
  for (;;) {
    struct sigaction view;
    const uint64_t version = g_actions[signo].Load(&view);
    const int rc = apply(signo, view);
    // Another store (another thread, or a handler that interrupted this one) since the
    // load: its writer may have applied its action before this one did. Again.
    if (g_actions[signo].version() == version) return rc;
  }
}

bool IsDefaultAction(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL;
}

bool IsIgnoreAction(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN;
}

bool DefaultActionIgnores(int signo) {
  return signo == SIGCHLD || signo == SIGCONT || signo == SIGURG || signo == SIGWINCH;
}

void CallProgramHandler(int signo, siginfo_t* info, void* context, const struct sigaction& action,
                        uint64_t version, KernelActionFn apply) {
  // The mask the kernel would have set: the interrupted one (ours adds nothing the
  // program did not ask for), plus sa_mask, plus the signal itself unless SA_NODEFER.
  sigset_t previous;
  real::pthread_sigmask()(SIG_BLOCK, &action.sa_mask, &previous);
  sigset_t self;
  sigemptyset(&self);
  sigaddset(&self, signo);
  real::pthread_sigmask()((action.sa_flags & SA_NODEFER) != 0 ? SIG_UNBLOCK : SIG_BLOCK, &self, nullptr);
  if ((action.sa_flags & SA_RESETHAND) != 0 && Valid(signo)) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    if (g_actions[signo].CompareExchange(version, dfl)) SyncKernelAction(signo, apply);
  }
  if ((action.sa_flags & SA_SIGINFO) != 0) {
    action.sa_sigaction(signo, info, context);
  } else {
    action.sa_handler(signo);
  }
  real::pthread_sigmask()(SIG_SETMASK, &previous, nullptr);
}

void DieAsTheDefaultWould(int signo, siginfo_t* info) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  real::sigaction()(signo, &dfl, nullptr);
  // An instruction that faulted (si_code > 0) faults again when the handler returns,
  // and the core holds the program's registers at the fault. SIGSYS from seccomp has a
  // positive si_code too, but its system call is not executed again.
  if ((signo == SIGFPE || signo == SIGILL) && info != nullptr && info->si_code > 0) return;
  // Sent (kill, raise, abort, the terminal, a timer): send it again, to this thread,
  // with the same siginfo. Blocked until the handler returns, it is delivered when
  // sigreturn restores the interrupted mask: at the interrupted instruction, as the
  // first one would have been.
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  real::pthread_sigmask()(SIG_BLOCK, &only, nullptr);
  const pid_t pid = getpid();
  if (info == nullptr || syscall(SYS_rt_tgsigqueueinfo, pid, Tid(), signo, info) != 0) {
    syscall(SYS_tgkill, pid, Tid(), signo);
  }
}

}  // namespace cilkprof::agent
