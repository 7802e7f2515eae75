// Signals that end the process (fatal_signals.h).
#include "fatal_signals.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "agent_state.h"
#include "crash_flush.h"
#include "real_functions.h"
#include "signal_mask.h"

namespace cilkprof::agent {
namespace {

constexpr int kWatched[] = {SIGABRT, SIGFPE,  SIGILL,  SIGQUIT, SIGSYS,  SIGXCPU,
                            SIGXFSZ, SIGTERM, SIGINT,  SIGHUP,  SIGPIPE, SIGALRM};

// What the program believes is installed for a watched signal. Written rarely (start-up,
// the program's sigaction) and read by the handler on any thread, so, like the fault
// guard's chained actions: two buffers, a writer fills the one readers do not use and
// then publishes its index; a reader always copies a complete action. Atomic words:
// no data race in the copy.
constexpr size_t kActionWords = (sizeof(struct sigaction) + 7) / 8;

struct ProgramView {
  std::atomic<uint64_t> words[2][kActionWords];
  std::atomic<uint32_t> current{0};
  // Set when an SA_RESETHAND handler is called: the next delivery sees SIG_DFL.
  std::atomic<bool> reset_to_default{false};
  std::atomic<bool> watched{false};
};

ProgramView g_views[_NSIG];
std::atomic<pid_t> g_writer{0};  // the thread changing a view; serializes writers

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

bool IsDefault(const struct sigaction& a) { return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL; }
bool IsIgnore(const struct sigaction& a) { return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN; }

void StoreView(int signo, const struct sigaction& action) {
  ProgramView& v = g_views[signo];
  uint64_t buffer[kActionWords] = {};
  memcpy(buffer, &action, sizeof action);
  const uint32_t next = 1 - v.current.load(std::memory_order_relaxed);
  for (size_t i = 0; i < kActionWords; ++i) v.words[next][i].store(buffer[i], std::memory_order_relaxed);
  v.current.store(next, std::memory_order_release);
  v.reset_to_default.store(false, std::memory_order_release);
}

struct sigaction LoadView(int signo) {
  const ProgramView& v = g_views[signo];
  struct sigaction action;
  if (v.reset_to_default.load(std::memory_order_acquire)) {
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    return action;
  }
  uint64_t buffer[kActionWords];
  const uint32_t index = v.current.load(std::memory_order_acquire);
  for (size_t i = 0; i < kActionWords; ++i) buffer[i] = v.words[index][i].load(std::memory_order_relaxed);
  memcpy(&action, buffer, sizeof action);
  return action;
}

// A tiny lock for writers of the views. A sigaction called from a handler that
// interrupted another one on the same thread goes ahead (it cannot wait for itself).
class WriterLock {
 public:
  WriterLock() : tid_(Tid()) {
    for (;;) {
      pid_t expected = 0;
      if (g_writer.compare_exchange_weak(expected, tid_, std::memory_order_acquire)) {
        owned_ = true;
        return;
      }
      if (expected == tid_) return;
      sched_yield();
    }
  }
  ~WriterLock() {
    if (owned_) g_writer.store(0, std::memory_order_release);
  }

 private:
  pid_t tid_;
  bool owned_ = false;
};

// The program's handler, called as the kernel would have: under its sa_mask (plus the
// signal itself unless SA_NODEFER), once only if SA_RESETHAND.
void CallProgramHandler(int signo, siginfo_t* info, void* context, const struct sigaction& action) {
  sigset_t block = action.sa_mask;
  if ((action.sa_flags & SA_NODEFER) == 0) sigaddset(&block, signo);
  sigset_t previous;
  real::pthread_sigmask()(SIG_BLOCK, &block, &previous);
  if ((action.sa_flags & SA_RESETHAND) != 0) {
    g_views[signo].reset_to_default.store(true, std::memory_order_release);
  }
  if ((action.sa_flags & SA_SIGINFO) != 0) {
    action.sa_sigaction(signo, info, context);
  } else {
    action.sa_handler(signo);
  }
  real::pthread_sigmask()(SIG_SETMASK, &previous, nullptr);
}

// The default action, now: SIG_DFL back in the kernel, then the fault again or the
// signal again.
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
  // Sent (kill, raise, abort, the terminal): send it again, to this thread, with the
  // same siginfo. Blocked until the handler returns, it is delivered when sigreturn
  // restores the interrupted mask: at the interrupted instruction, as the first one
  // would have been.
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  real::pthread_sigmask()(SIG_BLOCK, &only, nullptr);
  const pid_t pid = getpid();
  if (info == nullptr || syscall(SYS_rt_tgsigqueueinfo, pid, Tid(), signo, info) != 0) {
    syscall(SYS_tgkill, pid, Tid(), signo);
  }
}

void FatalSignalHandler(int signo, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction view = LoadView(signo);
  if (IsDefault(view)) {
    CrashFlush(signo);  // does nothing when the agent is inactive
    DieAsTheDefaultWould(signo, info);
  } else if (!IsIgnore(view)) {
    CallProgramHandler(signo, info, context, view);
  }
  errno = saved_errno;
}

// The agent's handler in front of the program's `action` (SA_RESTART and SA_ONSTACK
// as the program asked: they change what its code and handler see). SA_NODEFER with
// an empty mask: the program's mask is applied by CallProgramHandler.
int InstallHandler(int signo, const struct sigaction& action) {
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = FatalSignalHandler;
  ours.sa_flags = SA_SIGINFO | SA_NODEFER | (action.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigemptyset(&ours.sa_mask);
  return real::sigaction()(signo, &ours, nullptr);
}

// The unwinder's fault guard is about to let SIGSEGV or SIGBUS kill the process.
void BeforeFatalFault(int signo, const siginfo_t*) { CrashFlush(signo); }

}  // namespace

bool WatchesFatalSignal(int signo) {
  if (signo <= 0 || signo >= _NSIG || !g_views[signo].watched.load(std::memory_order_acquire)) {
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
    WriterLock lock;
    StoreView(signo, current);
    // An inherited SIG_IGN stays in the kernel (fatal_signals.h).
    if (!IsIgnore(current) && InstallHandler(signo, current) != 0) continue;
    g_views[signo].watched.store(true, std::memory_order_release);
  }
  unwinder::SetDefaultActionHook(BeforeFatalFault);
}

int FatalSignalSigaction(int signo, const struct sigaction* act, struct sigaction* old) {
  WriterLock lock;
  const struct sigaction previous = LoadView(signo);
  if (act != nullptr) {
    // The program's handlers run with the sampling signal open (signal_mask.h).
    struct sigaction scratch;
    const struct sigaction* program = ProgramAction(act, &scratch);
    const int rc = IsIgnore(*program) ? real::sigaction()(signo, program, nullptr)
                                      : InstallHandler(signo, *program);
    if (rc != 0) return rc;
    StoreView(signo, *program);
  }
  if (old != nullptr) *old = previous;
  return 0;
}

}  // namespace cilkprof::agent
