// The sampling signal: the handler, choosing and installing the signal, and keeping
// it when the program installs a handler of its own for it.
#include <signal.h>
#include <string.h>

#include <cerrno>
#include <string>

#include "agent_state.h"
#include "blame.h"
#include "code_range.h"
#include "log.h"
#include "real_functions.h"
#include "signal_mask.h"

namespace cilkprof::agent {
namespace {

bool IsDefault(const struct sigaction& sa) {
  return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

// A real-time signal nobody handles, from the top (the bottom ones are the ones
// libraries usually take). 0 if none.
int FindFreeRealtimeSignal(int avoid) {
  for (int signo = SIGRTMAX; signo >= SIGRTMIN; --signo) {
    if (signo == avoid) continue;
    struct sigaction current;
    if (real::sigaction()(signo, nullptr, &current) == 0 && IsDefault(current)) return signo;
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

// The program claims the signal the agent samples with: move sampling to a free
// real-time signal, then hand the old signal over. Locks: flush_mu and signal_mu held.
int MoveSamplingSignal(int old_signo, const struct sigaction* program_act) {
  AgentState& s = *g_state;
  const int fresh = FindFreeRealtimeSignal(old_signo);
  std::string error;
  if (fresh == 0 || !InstallSampleHandler(fresh, &error)) {
    // Keeping the signal would change the program's behaviour; stop sampling instead.
    __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
    SetKeptSignal(0);  // the program's masks are its own business again
    pthread_mutex_lock(&s.registry_mu);
    for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) DisarmThread(t);
    pthread_mutex_unlock(&s.registry_mu);
    Note("the program installed its own handler for signal " + SignalLabel(old_signo) +
         ", which the agent samples with, and " +
         (fresh == 0 ? std::string("no real-time signal is free to move to")
                     : "installing the handler on signal " + SignalLabel(fresh) + " failed: " + error) +
         "; sampling stopped here (the profile holds the samples taken so far). "
         "Set CILKPROF_SIGNAL to a signal the program does not use.");
    return real::sigaction()(old_signo, program_act, nullptr);
  }
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
  Note("the program installed its own handler for signal " + SignalLabel(old_signo) +
       "; the agent now samples with signal " + SignalLabel(fresh) +
       (all_moved ? std::string() : " (some threads could not be moved: " + error + ")"));
  struct sigaction scratch;
  return real::sigaction()(old_signo, ProgramAction(program_act, &scratch), nullptr);
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
// nothing else.
//
// With a perf event, samples come at Poisson intervals and weigh the mean interval plus
// any overrun (sample_interval.h); the next interval starts when the handler is done,
// so that its own time never hosts a sample. With a timer, a sample weighs the time
// the clock advanced since the thread's previous sample.
extern "C" void CilkprofSampleHandler(int, siginfo_t*, void* context) {
  const int saved_errno = errno;
  ThreadRecord* t = tls_thread;
  if (t != nullptr && __atomic_load_n(&g_sampling, __ATOMIC_RELAXED) != 0) {
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
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = CilkprofSampleHandler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;  // SA_RESTART: the program's calls resume
  sigemptyset(&sa.sa_mask);
  AgentState& s = *g_state;
  struct sigaction previous;
  if (real::sigaction()(signo, &sa, &previous) != 0) {
    *error = "sigaction(" + SignalLabel(signo) + ") failed: " + ErrnoText(errno);
    return false;
  }
  s.program_view[signo] = previous;
  s.program_view_valid[signo] = true;
  return true;
}

int ChooseInitialSignal(int requested, std::string* warning) {
  const int wanted = requested != 0 ? requested : SIGPROF;
  struct sigaction current;
  if (real::sigaction()(wanted, nullptr, &current) == 0 && IsDefault(current)) return wanted;
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

void RestoreProgramDisposition() {
  AgentState& s = *g_state;
  const int signo = s.sampler.signo;
  if (signo > 0 && s.program_view_valid[signo]) {
    real::sigaction()(signo, &s.program_view[signo], nullptr);
  }
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
  if (!AgentActive() || tls_in_agent != 0 || signo <= 0 || signo >= _NSIG) return false;
  // A call from inside the agent library itself (e.g. the unwinder's fault guard
  // restoring SIG_DFL to die with the default action, in a signal handler) is the
  // agent's own business and goes straight to libc.
  if (CalledFromAgent(caller)) return false;
  if (signo == __atomic_load_n(&g_state->sampler.signo, __ATOMIC_RELAXED)) return true;
  return (signo == SIGSEGV || signo == SIGBUS) && unwinder::IsFaultGuardSignal(signo);
}

int InterposedSigaction(int signo, const struct sigaction* act, struct sigaction* old,
                        const void* caller) {
  struct sigaction scratch;
  if (!AgentOwnsSignal(signo, caller)) {
    // The program's handlers run with the sampling signal open (signal_mask.h).
    if (!CalledFromAgent(caller)) act = ProgramAction(act, &scratch);
    return real::sigaction()(signo, act, old);
  }
  AgentState& s = *g_state;
  if (signo == SIGSEGV || signo == SIGBUS) {
    // The unwinder's fault guard stays installed first and forwards other faults.
    pthread_mutex_lock(&s.signal_mu);
    if (old != nullptr && !unwinder::GetChainedFaultHandler(signo, old)) *old = s.program_view[signo];
    if (act != nullptr) {
      s.program_view[signo] = *act;
      tls_in_agent++;
      unwinder::SetChainedFaultHandler(signo, ProgramAction(act, &scratch));
      tls_in_agent--;
    }
    pthread_mutex_unlock(&s.signal_mu);
    return 0;
  }
  pthread_mutex_lock(&s.flush_mu);
  pthread_mutex_lock(&s.signal_mu);
  int rc = 0;
  if (signo != s.sampler.signo) {
    rc = real::sigaction()(signo, ProgramAction(act, &scratch), old);  // moved meanwhile
  } else {
    if (old != nullptr) *old = s.program_view[signo];
    if (act != nullptr) {
      rc = MoveSamplingSignal(signo, act);
      if (rc == 0) s.program_view_valid[signo] = false;
    }
  }
  pthread_mutex_unlock(&s.signal_mu);
  pthread_mutex_unlock(&s.flush_mu);
  return rc;
}

}  // namespace cilkprof::agent
