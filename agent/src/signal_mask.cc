#include "signal_mask.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "agent_state.h"
#include "code_range.h"
#include "real_functions.h"

namespace cilkprof::agent {
namespace {

int g_kept_signal = 0;  // relaxed atomic accesses
CodeRange g_unwind_library;

// Calls from the code the sampling handler runs keep their masks: the agent's own
// (its flusher, the fault guard running the program's handler under its sa_mask), and
// libunwind's, which blocks every signal so that no handler re-enters its locks or the
// loader while it holds them.
bool FromHandlerCode(const void* caller) {
  return CalledFromAgent(caller) || g_unwind_library.Contains(caller);
}

// `set` without `signo`, in `scratch`.
const sigset_t* Without(const sigset_t* set, int signo, sigset_t* scratch) {
  *scratch = *set;
  sigdelset(scratch, signo);
  return scratch;
}

}  // namespace

void SetKeptSignal(int signo) { __atomic_store_n(&g_kept_signal, signo, __ATOMIC_RELAXED); }

int KeptSignal() { return __atomic_load_n(&g_kept_signal, __ATOMIC_RELAXED); }

const sigset_t* ProgramMaskRequest(int how, const sigset_t* set, sigset_t* scratch,
                                   const void* caller) {
  const int signo = KeptSignal();
  if (signo == 0 || set == nullptr || (how != SIG_BLOCK && how != SIG_SETMASK)) return set;
  if (sigismember(set, signo) != 1 || FromHandlerCode(caller)) return set;
  return Without(set, signo, scratch);
}

int ProgramBsdMask(int mask, const void* caller) {
  const int signo = KeptSignal();
  if (signo == 0 || signo >= 32 || FromHandlerCode(caller)) return mask;
  return mask & ~(1 << (signo - 1));  // the bit of sigmask(signo)
}

const sigset_t* ProgramWaitSet(const sigset_t* set, sigset_t* scratch, const void* caller) {
  const int signo = KeptSignal();
  if (signo == 0 || set == nullptr || sigismember(set, signo) != 1 || FromHandlerCode(caller)) {
    return set;
  }
  Without(set, signo, scratch);
  // A set of this signal alone is the program waiting for it on purpose: leave it.
  return sigisemptyset(scratch) ? set : scratch;
}

const struct sigaction* ProgramAction(const struct sigaction* act, struct sigaction* scratch) {
  const int signo = KeptSignal();
  if (signo == 0 || act == nullptr || sigismember(&act->sa_mask, signo) != 1) return act;
  *scratch = *act;
  sigdelset(&scratch->sa_mask, signo);
  return scratch;
}

void OpenKeptSignalOnThisThread() {
  const int signo = KeptSignal();
  if (signo == 0) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  real::pthread_sigmask()(SIG_UNBLOCK, &set, nullptr);
}

bool KeptSignalBlockedOnThisThread() {
  const int signo = KeptSignal();
  sigset_t current;
  if (signo == 0 || real::pthread_sigmask()(SIG_BLOCK, nullptr, &current) != 0) return false;
  return sigismember(&current, signo) == 1;
}

void OpenFaultSignalsInHandler(const ucontext_t* interrupted) {
  if (sigismember(&interrupted->uc_sigmask, SIGSEGV) != 1 &&
      sigismember(&interrupted->uc_sigmask, SIGBUS) != 1) {
    return;
  }
  sigset_t faults;
  sigemptyset(&faults);
  sigaddset(&faults, SIGSEGV);
  sigaddset(&faults, SIGBUS);
  real::pthread_sigmask()(SIG_UNBLOCK, &faults, nullptr);
}

FaultSignalsOpen::FaultSignalsOpen(const ucontext_t* context) {
  sigemptyset(&reopened_);
  for (int signo : {SIGSEGV, SIGBUS}) {
    if (sigismember(&context->uc_sigmask, signo) == 1) sigaddset(&reopened_, signo);
  }
  if (sigisemptyset(&reopened_)) return;
  changed_ = real::pthread_sigmask()(SIG_UNBLOCK, &reopened_, nullptr) == 0;
}

FaultSignalsOpen::~FaultSignalsOpen() {
  if (changed_) real::pthread_sigmask()(SIG_BLOCK, &reopened_, nullptr);
}

void FindUnwindLibrary() {
  g_unwind_library = TextSegmentOf(reinterpret_cast<const void*>(&unw_step));
}

bool CalledFromHandlerCode(const void* caller) { return FromHandlerCode(caller); }

}  // namespace cilkprof::agent
