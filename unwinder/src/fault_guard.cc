// The fault guard: SIGSEGV/SIGBUS handlers that turn a fault inside RunGuarded() into
// an early return, and forward every other fault to the program's handler exactly as
// the kernel would have delivered it. Chaining rules: docs/UNWINDER.md.
#include "cilkprof/unwinder/fault_guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "cilkprof/unwinder/published_action.h"
#include "cilkprof/unwinder/unwinder.h"
#include "internal.h"

namespace cilkprof::unwinder {
namespace {

// Per-thread guard state in initial-exec TLS (no __tls_get_addr in the handler): the
// innermost armed guard, a frame on the stack of its RunGuarded call. Guards nest: a
// sampling signal may interrupt code that runs guarded outside any handler (an OpenMP
// task's creation-path capture, a lock charge), and its own walk then pushes a frame
// of its own and pops it before returning, so the interrupted guard finds itself on
// top again. Each frame owns its jump buffer, so no nested guard overwrites another's.
struct GuardFrame {
  sigjmp_buf resume;
  GuardFrame* prev;
};
__attribute__((tls_model("initial-exec"))) constinit thread_local GuardFrame* volatile t_top = nullptr;

// ---- The chained (program) handlers -------------------------------------------------
//
// Written rarely (Initialize, the agent's sigaction interposer, which may run inside a
// signal handler) and read from the fault handler on any thread: lock-free, each read
// a complete action (published_action.h).
PublishedAction g_segv_chain;
PublishedAction g_bus_chain;
std::mutex g_install;  // serializes InstallFaultGuard; never taken in a handler
std::atomic<bool> g_installed{false};

PublishedAction* ChainFor(int signo) {
  if (signo == SIGSEGV) return &g_segv_chain;
  if (signo == SIGBUS) return &g_bus_chain;
  return nullptr;
}

// ---- Forwarding ----------------------------------------------------------------------

// A fault the kernel raised because of the faulting instruction (as opposed to kill(),
// raise(), sigqueue(): si_code <= 0). Returning from the handler re-executes it.
bool IsSynchronousFault(const siginfo_t* info) { return info != nullptr && info->si_code > 0; }

std::atomic<void (*)(int, const siginfo_t*)> g_default_action_hook{nullptr};

// Terminates as the default action would: core dump with this signal.
void DieWithDefaultAction(int signo, siginfo_t* info) {
  if (auto hook = g_default_action_hook.load(std::memory_order_acquire)) hook(signo, info);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, nullptr);
  if (IsSynchronousFault(info)) {
    // Returning re-executes the faulting instruction, which faults again under the
    // default action: the core shows the original registers.
    return;
  }
  // Sent by a process: resend it with the same siginfo. signo is not blocked (the
  // guard runs with SA_NODEFER), so it is delivered on return from the system call.
  const pid_t pid = getpid();
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (info == nullptr || syscall(SYS_rt_tgsigqueueinfo, pid, tid, signo, info) != 0)
    syscall(SYS_tgkill, pid, tid, signo);
}

void ForwardToProgram(int signo, siginfo_t* info, void* context) {
  PublishedAction* chain = ChainFor(signo);
  struct sigaction action;
  const uint64_t version = chain->Load(&action);
  const bool wants_siginfo = (action.sa_flags & SA_SIGINFO) != 0;

  if (!wants_siginfo && action.sa_handler == SIG_DFL) {
    DieWithDefaultAction(signo, info);
    return;
  }
  if (!wants_siginfo && action.sa_handler == SIG_IGN) {
    // The kernel ignores a sent SIGSEGV/SIGBUS, but a fault raised by an instruction
    // cannot be ignored: it kills the process as the default action would.
    if (IsSynchronousFault(info)) DieWithDefaultAction(signo, info);
    return;
  }

  // A handler: run it under the signal mask the kernel would have installed.
  sigset_t block = action.sa_mask;
  if ((action.sa_flags & SA_NODEFER) == 0) sigaddset(&block, signo);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  if ((action.sa_flags & SA_RESETHAND) != 0) {
    // As the kernel does on delivery; unless the program replaced the action meanwhile.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    chain->CompareExchange(version, dfl);
  }
  if (wants_siginfo)
    action.sa_sigaction(signo, info, context);
  else
    action.sa_handler(signo);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void FaultHandler(int signo, siginfo_t* info, void* context) {
  GuardFrame* top = t_top;
  if (top != nullptr) {
    // A fault inside RunGuarded on this thread: abandon the innermost guarded function.
    siglongjmp(top->resume, 1);
  }
  const int saved_errno = errno;
  ForwardToProgram(signo, info, context);
  errno = saved_errno;
}

}  // namespace

GuardOutcome RunGuarded(void (*fn)(void*), void* arg) {
  GuardFrame frame;
  frame.prev = t_top;
  // savemask = 0: see fault_guard.h for why the mask needs no restoring.
  if (sigsetjmp(frame.resume, 0) != 0) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_top = frame.prev;
    return GuardOutcome::kFaulted;
  }
  // The frame is complete before it is published: a signal arriving on either side of
  // this store nests above whichever guard is on top then, and restores it.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_top = &frame;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  fn(arg);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_top = frame.prev;
  return GuardOutcome::kCompleted;
}

bool InsideGuard() { return t_top != nullptr; }

namespace internal {

bool InstallFaultGuard(const char** error) {
  std::lock_guard<std::mutex> lock(g_install);
  if (g_installed.load(std::memory_order_acquire)) return true;
  struct sigaction guard;
  memset(&guard, 0, sizeof(guard));
  guard.sa_sigaction = FaultHandler;
  sigemptyset(&guard.sa_mask);
  // SA_ONSTACK: a stack overflow can only be handled on an alternate stack, and a
  // program that set one up for its own SIGSEGV handler relies on it.
  // SA_NODEFER (with the empty mask): the mask at a fault equals the mask at the jump
  // target, so RunGuarded's sigsetjmp need not save it.
  guard.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
  for (int signo : {SIGSEGV, SIGBUS}) {
    struct sigaction previous;
    if (sigaction(signo, nullptr, &previous) != 0) {
      *error = "cannot read the current SIGSEGV/SIGBUS action (sigaction failed)";
      return false;
    }
    ChainFor(signo)->Exchange(previous, nullptr);
  }
  for (int signo : {SIGSEGV, SIGBUS}) {
    if (sigaction(signo, &guard, nullptr) != 0) {
      *error = "cannot install the unwinder's SIGSEGV/SIGBUS fault guard (sigaction failed)";
      return false;
    }
  }
  g_installed.store(true, std::memory_order_release);
  return true;
}

}  // namespace internal

void SetChainedFaultHandler(int signo, const struct sigaction* handler, struct sigaction* previous) {
  PublishedAction* chain = ChainFor(signo);
  if (chain == nullptr || handler == nullptr) return;
  chain->Exchange(*handler, previous);
}

bool GetChainedFaultHandler(int signo, struct sigaction* handler) {
  PublishedAction* chain = ChainFor(signo);
  if (chain == nullptr || handler == nullptr || !g_installed.load(std::memory_order_acquire))
    return false;
  chain->Load(handler);
  return true;
}

void SetDefaultActionHook(void (*hook)(int signo, const siginfo_t* info)) {
  g_default_action_hook.store(hook, std::memory_order_release);
}

bool IsFaultGuardSignal(int signo) {
  return (signo == SIGSEGV || signo == SIGBUS) && g_installed.load(std::memory_order_acquire);
}

}  // namespace cilkprof::unwinder
