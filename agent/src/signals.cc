// The sampling signal: the handler, choosing and installing the signal, and keeping
// it when the program installs a handler of its own for it.
//
// When the program installs an action for the signal the agent samples with (it
// "claims" it), the interposed sigaction records the action (program_actions.h) and
// asks the flusher to move sampling to a free real-time signal; the flusher then hands
// the old signal over to the program's action. Until then the agent's handler stays in
// the kernel and passes to the program's action every signal that is not one of the
// agent's samples (sample_source.h tells them apart by their siginfo). The interposed
// sigaction itself does nothing else: it may run inside a signal handler (POSIX allows
// it), so it is async-signal-safe and takes no lock (docs/AGENT.md, "fork, exec and
// the profiling signal").
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "adopted_threads.h"
#include "agent_state.h"
#include "blame.h"
#include "code_range.h"
#include "crash_flush.h"
#include "log.h"
#include "program_actions.h"
#include "real_functions.h"
#include "signal_mask.h"

namespace cilkprof::agent {
namespace {

// The signal whose kernel action is the agent's sample handler: the sampling signal,
// until a move fails (then 0). Written under signal_mu, read anywhere.
std::atomic<int> g_handler_signal{0};
// Signals the program installed an action for while the agent sampled with them.
// Their sigaction stays routed here for good: the kernel action follows the program's
// view (SyncKernelAction with ApplyClaimedSignal), and the sample handler passes on
// what is not a sample while it is still installed.
std::atomic<bool> g_claimed[_NSIG];
// A claimed sampling signal the flusher is to move away from (0: none).
std::atomic<int> g_move_request{0};

// A real-time signal nobody handles, from the top (the bottom ones are the ones
// libraries usually take), other than one the program claimed. 0 if none.
int FindFreeRealtimeSignal(int avoid) {
  for (int signo = SIGRTMAX; signo >= SIGRTMIN; --signo) {
    if (signo == avoid || g_claimed[signo].load(std::memory_order_acquire)) continue;
    struct sigaction current;
    if (real::sigaction()(signo, nullptr, &current) == 0 && IsDefaultAction(current)) return signo;
  }
  return 0;
}

std::string SignalLabel(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  if (abbrev != nullptr) return std::to_string(signo) + " (SIG" + abbrev + ")";
  return std::to_string(signo) + " (SIGRTMIN+" + std::to_string(signo - SIGRTMIN) + ")";
}

void Note(const std::string& text) {
  // flush_mu is held by the caller: the warning goes into the next Hello (a fork
  // child's, or the current one if it has not been sent yet).
  g_state->warnings.push_back(text);
  LogLine(text);
}

struct sigaction SampleHandlerAction() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = CilkprofSampleHandler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;  // SA_RESTART: the program's calls resume
  sigemptyset(&sa.sa_mask);
  return sa;
}

// The kernel action of a claimed signal: the sample handler while the agent still
// samples with it (the move is pending), the program's own action once it does not.
int ApplyClaimedSignal(int signo, const struct sigaction& view) {
  if (signo == g_handler_signal.load(std::memory_order_acquire)) {
    const struct sigaction ours = SampleHandlerAction();
    return real::sigaction()(signo, &ours, nullptr);
  }
  return real::sigaction()(signo, &view, nullptr);
}

// A signal of a claimed sampling signal that is not a sample: the program's, as the
// kernel would have delivered it.
void PassToProgram(int signo, siginfo_t* info, void* context) {
  struct sigaction view;
  const uint64_t version = LoadProgramAction(signo, &view);
  if (IsIgnoreAction(view)) return;
  if (IsDefaultAction(view)) {
    if (DefaultActionIgnores(signo)) return;
    CrashFlush(signo);  // the program dies of it: the last flush first
    DieAsTheDefaultWould(signo, info);
    return;
  }
  CallProgramHandler(signo, info, context, view, version, ApplyClaimedSignal);
}

// Wakes the flusher. Async-signal-safe: write(2) on the eventfd.
void WakeFlusher() {
  const int fd = __atomic_load_n(&g_state->wake_fd, __ATOMIC_RELAXED);
  const uint64_t one = 1;
  if (fd >= 0) (void)!write(fd, &one, sizeof one);
}

CodeRange g_agent_text;

}  // namespace

void FindAgentText() {
  g_agent_text = TextSegmentOf(reinterpret_cast<const void*>(&CilkprofSampleHandler));
}

bool CalledFromAgent(const void* caller) { return g_agent_text.Contains(caller); }

// Async-signal-safe: reads its own thread's record through initial-exec TLS, reads the
// sampling clock and re-arms the perf event (sample_source.h: read and ioctl on the
// thread's own event), calls pthread_sigmask (signal_mask.h: the fault guard's signals)
// and TakeSample (blame.h: the runtime's state, the logical unwinder, the CCT insert),
// nothing else. On a signal the program claimed (above), what is not a sample goes to
// the program's action instead (program_actions.h, also async-signal-safe).
//
// With a perf event, samples come at Poisson intervals and weigh the mean interval plus
// any overrun (sample_interval.h); the next interval starts when the handler is done,
// so that its own time never hosts a sample. With a timer, a sample weighs the time
// the clock advanced since the thread's previous sample.
extern "C" void CilkprofSampleHandler(int signo, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  ThreadRecord* t = tls_thread;
  // A thread the agent did not see start claims the record made for it (standby.h).
  if (__builtin_expect(t == nullptr, 0)) t = ClaimAdoptedRecord();
  if (g_claimed[signo].load(std::memory_order_acquire) && !IsOwnSample(t, info)) {
    PassToProgram(signo, info, context);
  } else if (t != nullptr && __atomic_load_n(&g_sampling, __ATOMIC_RELAXED) != 0) {
    if (t->in_handler) {
      CounterAdd(&t->counters.dropped_reentrant, 1);
    } else {
      t->in_handler = 1;
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
      const bool poisson = UsesPoissonIntervals(t);
      const uint64_t mean = g_state->sampler.period_ns;
      const uint64_t last = __atomic_load_n(&t->last_clock_ns, __ATOMIC_RELAXED);
      uint64_t now = last;
      ReadSampleClock(t, &now);
      if (poisson) HoldSamplesInHandler(t, mean);
      const uint64_t weight = poisson ? WeighPoissonSample(t, mean, now) : (now > last ? now - last : 0);
      __atomic_store_n(&t->last_clock_ns, now, __ATOMIC_RELAXED);
      // Inside dlclose the loader edits its list of modules, the one window in which
      // libunwind's FDE lookup is unsafe (docs/UNWINDER.md): walk frame pointers there.
      const unwinder::Mode mode = tls_in_loader != 0 ? unwinder::Mode::kFramePointer : g_handler_mode;
      const auto* interrupted = static_cast<const ucontext_t*>(context);
      OpenFaultSignalsInHandler(interrupted);
      TakeSample(t, interrupted, mode, weight);
      if (poisson) ScheduleNextSample(t, mean);
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
      t->in_handler = 0;
    }
  }
  errno = saved_errno;
}

bool InstallSampleHandler(int signo, std::string* error) {
  const struct sigaction sa = SampleHandlerAction();
  struct sigaction previous;
  if (real::sigaction()(signo, &sa, &previous) != 0) {
    *error = "sigaction(" + SignalLabel(signo) + ") failed: " + ErrnoText(errno);
    return false;
  }
  StoreProgramAction(signo, previous, nullptr);  // what the program sees it has
  g_handler_signal.store(signo, std::memory_order_release);
  return true;
}

int ChooseInitialSignal(int requested, std::string* warning) {
  const int wanted = requested != 0 ? requested : SIGPROF;
  struct sigaction current;
  if (real::sigaction()(wanted, nullptr, &current) == 0 && IsDefaultAction(current)) return wanted;
  if (requested != 0) {
    *warning = "CILKPROF_SIGNAL=" + std::to_string(requested) +
               " already has a handler in this process; the agent uses it anyway as asked";
    return wanted;
  }
  const int fresh = FindFreeRealtimeSignal(wanted);
  if (fresh == 0) {
    *warning = "signal " + SignalLabel(wanted) +
               " already has a handler and no real-time signal is free: no signal to sample with";
    return 0;
  }
  *warning = "signal " + SignalLabel(wanted) + " already has a handler; sampling with signal " +
             SignalLabel(fresh) + " instead";
  return fresh;
}

void RestoreProgramDisposition(bool discard_pending) {
  const int signo = g_handler_signal.exchange(0, std::memory_order_acq_rel);
  if (signo <= 0) return;
  struct sigaction view;
  LoadProgramAction(signo, &view);
  if (discard_pending && (IsDefaultAction(view) || IsIgnoreAction(view))) {
    // A sample signal already queued to a thread that has not run since (or that blocks
    // it) would otherwise meet the program's default action, which for SIGPROF is to
    // terminate. Ignoring a signal discards its pending instances in every thread.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    real::sigaction()(signo, &ignore, nullptr);
  }
  real::sigaction()(signo, &view, nullptr);
}

void DrainPendingSamples() {
  if (g_state == nullptr || g_state->sampler.signo == 0) return;
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, g_state->sampler.signo);
  real::pthread_sigmask()(SIG_BLOCK, &set, &old);
  const timespec zero{0, 0};
  while (real::sigtimedwait()(&set, nullptr, &zero) > 0) {
  }
  real::pthread_sigmask()(SIG_SETMASK, &old, nullptr);
}

bool AgentOwnsSignal(int signo, const void* caller) {
  if (!AgentActive() || signo <= 0 || signo >= _NSIG) return false;
  // A call from inside the agent library itself (the unwinder installing its fault
  // guard, or restoring SIG_DFL to die with the default action, in a signal handler)
  // is the agent's own business and goes straight to libc. Told apart by the caller's
  // address, never by a per-thread flag: a program's handler may interrupt the agent
  // on its thread and call sigaction, and that call is the program's.
  if (CalledFromAgent(caller)) return false;
  if (signo == g_handler_signal.load(std::memory_order_acquire) ||
      g_claimed[signo].load(std::memory_order_acquire)) {
    return true;
  }
  return (signo == SIGSEGV || signo == SIGBUS) && unwinder::IsFaultGuardSignal(signo);
}

// Async-signal-safe and lock-free, like everything it calls (see the top of the file).
int InterposedSigaction(int signo, const struct sigaction* act, struct sigaction* old,
                        const void* caller) {
  struct sigaction scratch;
  if (!AgentOwnsSignal(signo, caller)) {
    // The program's handlers run with the sampling signal open (signal_mask.h).
    if (!CalledFromAgent(caller)) act = ProgramAction(act, &scratch);
    return real::sigaction()(signo, act, old);
  }
  if (signo == SIGSEGV || signo == SIGBUS) {
    // The unwinder's fault guard stays installed first and forwards other faults.
    if (act == nullptr) {
      if (old != nullptr) unwinder::GetChainedFaultHandler(signo, old);
      return 0;
    }
    struct sigaction previous;
    unwinder::SetChainedFaultHandler(signo, ProgramAction(act, &scratch), &previous);
    if (old != nullptr) *old = previous;
    return 0;
  }
  // The sampling signal, or one the program claimed from it earlier.
  if (act == nullptr) {
    if (old != nullptr) LoadProgramAction(signo, old);
    return 0;
  }
  struct sigaction previous;
  StoreProgramAction(signo, *ProgramAction(act, &scratch), &previous);
  g_claimed[signo].store(true, std::memory_order_release);
  const int rc = SyncKernelAction(signo, ApplyClaimedSignal);
  if (rc != 0) {
    const int saved_errno = errno;
    StoreProgramAction(signo, previous, nullptr);  // the kernel refused: nothing changes
    SyncKernelAction(signo, ApplyClaimedSignal);
    errno = saved_errno;
    return rc;
  }
  if (signo == g_handler_signal.load(std::memory_order_acquire)) {
    g_move_request.store(signo, std::memory_order_release);
    WakeFlusher();
  }
  if (old != nullptr) *old = previous;
  return 0;
}

void MoveClaimedSamplingSignal() {
  const int claimed = g_move_request.exchange(0, std::memory_order_acq_rel);
  if (claimed == 0) return;
  AgentState& s = *g_state;
  pthread_mutex_lock(&s.signal_mu);
  if (claimed != g_handler_signal.load(std::memory_order_acquire)) {
    pthread_mutex_unlock(&s.signal_mu);  // moved already
    return;
  }
  const int fresh = FindFreeRealtimeSignal(claimed);
  std::string error;
  if (fresh == 0 || !InstallSampleHandler(fresh, &error)) {
    // Keeping the signal would change the program's behaviour; stop sampling instead.
    __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
    SetKeptSignal(0);  // the program's masks are its own business again
    g_handler_signal.store(0, std::memory_order_release);
    pthread_mutex_lock(&s.registry_mu);
    for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) DisarmThread(t);
    pthread_mutex_unlock(&s.registry_mu);
    Note("the program installed its own handler for signal " + SignalLabel(claimed) +
         ", which the agent samples with, and " +
         (fresh == 0 ? std::string("no real-time signal is free to move to")
                     : "installing the handler on signal " + SignalLabel(fresh) + " failed: " + error) +
         "; sampling stopped here (the profile holds the samples taken so far). "
         "Set CILKPROF_SIGNAL to a signal the program does not use.");
  } else {
    pthread_mutex_lock(&s.registry_mu);
    __atomic_store_n(&s.sampler.signo, fresh, __ATOMIC_RELAXED);
    // Masks blocked before the move may still block `fresh` (docs/AGENT.md, "Signal
    // masks"): such threads are found and reported when they end.
    SetKeptSignal(fresh);
    bool all_moved = true;
    for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) {
      if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) continue;
      all_moved = RetargetThread(t, s.sampler, &error) && all_moved;
    }
    pthread_mutex_unlock(&s.registry_mu);
    Note("the program installed its own handler for signal " + SignalLabel(claimed) +
         "; the agent now samples with signal " + SignalLabel(fresh) +
         (all_moved ? std::string() : " (some threads could not be moved: " + error + ")"));
  }
  // Hand the old signal over: its kernel action becomes the program's. A program's
  // sigaction that applied the sample handler before g_handler_signal changed sees the
  // new version and applies again.
  RepublishProgramAction(claimed);
  SyncKernelAction(claimed, ApplyClaimedSignal);
  pthread_mutex_unlock(&s.signal_mu);
}

}  // namespace cilkprof::agent
