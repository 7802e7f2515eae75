#include "standby.h"

#include <unistd.h>

#include "adopted_threads.h"
#include "agent_state.h"
#include "control/control_server.h"
#include "control/injected_interposition.h"
#include "fatal_signals.h"
#include "late_attach.h"
#include "log.h"
#include "ompt/ompt_tool.h"
#include "runtime_view.h"
#include "sample_source.h"
#include "signal_mask.h"
#include "timeline/timeline_control.h"
#include "unsampled.h"

namespace cilkprof::agent {
namespace {

// Orders attach, detach and the exit path (standby.h). Never taken by the flusher.
pthread_mutex_t g_attach_mu = PTHREAD_MUTEX_INITIALIZER;
bool g_attached = false;
bool g_persistent = false;
bool g_workspan_hooks = false;
uint64_t g_attached_since_unix_ns = 0;

// The request's settings, as the environment would give them under `cilkprof run`.
void ApplyRequest(const control::AttachRequest& r, AgentState* s) {
  Config& c = s->config;
  c.clock = r.clock == "wall" ? ClockKind::kWall : ClockKind::kCpu;
  c.period_ns = r.period_ns;
  c.unwind = r.unwind == "fp" ? UnwindKind::kFramePointer : UnwindKind::kDwarf;
  c.locks = r.locks;
  c.flush_ms = r.flush_ms;
  c.timeline = r.timeline;
  c.sample_source = r.source == "perf"    ? SampleSourceChoice::kPerfEvent
                    : r.source == "timer" ? SampleSourceChoice::kTimer
                                          : SampleSourceChoice::kAuto;
  s->sampler = SamplerSettings();
  s->sampler.clock = c.clock;
  s->sampler.period_ns = c.period_ns;
  s->sampler.sampled = true;
  g_handler_mode = c.unwind == UnwindKind::kDwarf ? unwinder::Mode::kDwarf : unwinder::Mode::kFramePointer;
}

// Closes every known live thread's sample source: at a detach (no descriptor of ours
// stays open between windows) and again at an attach, where `reinit` also reads each
// thread's sampling clock afresh (the clock may not be the last window's). Sampling is
// off (g_sampling 0) and every source disarmed, so no handler uses the sources now.
void ResetThreadSources(AgentState* s, bool reinit) {
  pthread_mutex_lock(&s->registry_mu);
  for (ThreadRecord* t = s->threads; t != nullptr; t = t->next) {
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) continue;
    if (t->perf_fd >= 0) close(t->perf_fd);
    t->perf_fd = -1;
    if (t->has_timer) timer_delete(t->timer);
    t->has_timer = false;
    __atomic_store_n(&t->source, kNoSource, __ATOMIC_RELEASE);
    __atomic_store_n(&t->interval_rng, uint64_t{0}, __ATOMIC_RELAXED);
    t->end_measured = false;
    if (reinit) InitSampleClock(t, s->sampler);
  }
  pthread_mutex_unlock(&s->registry_mu);
}

// After a detach: the next connection knows nothing, so everything is declared again;
// what was reported stays reported (the builders' shadows), so the next window's
// deltas hold only what runs in it.
void PrepareNextWindow(AgentState* s) {
  pthread_mutex_lock(&s->flush_mu);
  s->hello_sent = false;
  s->transport.Abandon();
  s->modules.ResendAll();
  pthread_mutex_lock(&s->registry_mu);
  for (ThreadRecord* t = s->threads; t != nullptr; t = t->next) {
    t->builder.ResendNodes();
    t->announced = false;
    t->sent_name.clear();
  }
  pthread_mutex_unlock(&s->registry_mu);
  pthread_mutex_unlock(&s->flush_mu);
}

std::string Busy() {
  return std::string("already attached") + (g_persistent ? " (continuous mode, to a cilkprofd)" : "") +
         " since " + std::to_string((UnixNowNs() - g_attached_since_unix_ns) / 1000000000ull) +
         " s ago; wait for that attach to end, or end it with `cilkprof detach " + std::to_string(getpid()) + "`";
}

// g_attach_mu held.
bool DetachLocked(const char* reason) {
  if (!g_attached) return false;
  AgentState& s = *g_state;
  __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
  StopFlusher();
  // Disarms every thread, drains pending samples; the window's work/span goes with the
  // last flush (FlushWorkSpanForDetach).
  FlushAndSayGoodbye(reason);
  if (s.injected) RestoreProgramCalls();
  // No descriptor of ours stays open in the program between windows.
  ResetThreadSources(&s, /*reinit=*/false);
  if (g_workspan_hooks) {
    workspan::RemoveWorkSpanHooks();
    g_workspan_hooks = false;
  }
  timeline::StopTimeline();  // after the last flush sent what the rings held
  RestoreProgramDisposition(/*discard_pending=*/true);
  UninstallFatalSignalHandlers();
  SetKeptSignal(0);
  PrepareNextWindow(&s);
  g_attached = false;
  g_persistent = false;
  return true;
}

}  // namespace

bool StartStandby(const Config& config, bool injected, std::string* why) {
  std::string local;
  std::string& reason = why != nullptr ? *why : local;
  AgentState* s = NewAgentState(config);
  s->standby = true;
  s->injected = injected;
  workspan::SetStandby(true);  // the runtime's start-up discovery gets no hooks
  const char* unwinder_error = "unknown error";
  if (!unwinder::Initialize(&unwinder_error)) {
    reason = std::string("the stack unwinder could not start: ") + unwinder_error;
  } else if (!RegisterLifecycleHooks(&reason)) {
  } else if (StartControlServer(&reason)) {
    // From here on nothing the agent says goes to the program's stderr (log.h).
    SetSilent(true);
    return true;
  }
  if (!injected) LogLine("standby agent inactive: " + reason);
  return false;
}

AttachOutcome AttachNow(const control::AttachRequest& request, int aggregator_fd) {
  AttachOutcome out;
  pthread_mutex_lock(&g_attach_mu);
  AgentState& s = *g_state;
  if (g_attached) {
    out.kind = AttachOutcome::kBusy;
    out.message = Busy();
  } else if (getpid() != s.pid) {
    out.message = "internal error: the control thread runs in another process";
  } else {
    ApplyRequest(request, &s);
    s.warnings = TakeSilencedLines();
    // OpenMP with no task view in this window (an injected agent came after libomp's
    // start, libgomp, OMP_TOOL=disabled...): said in the window's Hello (ompt_tool.h).
    ompt::NoteOpenMpWithoutTool(/*attach=*/true, s.injected, &s.warnings);
    if (!SetUpSampling(&s)) {
      const std::vector<std::string> lines = TakeSilencedLines();
      out.message = "cannot sample: " + (lines.empty() ? std::string("no signal to sample with") : lines.back());
    } else {
      InstallFatalSignalHandlers();  // the last data of a crash in the window
      // The runtime, if one runs: logical paths and idleness from now on; work/span
      // from its next top-level computation (late_attach.h). None is no error: a
      // program without the Cilk runtime.
      if (request.timeline) timeline::StartTimeline(s.config.timeline_events);  // before the runtime's events
      std::string no_runtime;
      AttachRunningRuntime(&no_runtime);
      if (request.workspan) {
        workspan::InstallWorkSpanHooks();
        g_workspan_hooks = true;
      }
      // An injected agent's interposers are not the program's until its GOT says so
      // (control/injected_interposition.h): lock blame and thread registration.
      std::string redirect_note;
      if (s.injected && !RedirectProgramCalls(&redirect_note)) s.warnings.push_back(redirect_note);

      pthread_mutex_lock(&s.flush_mu);
      s.pid = getpid();
      s.start_unix_ns = UnixNowNs();
      s.hello_sent = false;
      s.transport.AdoptConnection(aggregator_fd, s.pid);
      aggregator_fd = -1;
      pthread_mutex_unlock(&s.flush_mu);
      NoteCpuBase();
      ResetThreadSources(&s, /*reinit=*/true);
      SetKeptSignal(s.sampler.signo);
      __atomic_store_n(&s.shut_down, false, __ATOMIC_RELEASE);
      __atomic_store_n(&g_sampling, 1, __ATOMIC_RELEASE);
      ArmAllLiveThreads();
      AdoptUnknownThreads();
      g_attached = true;
      g_persistent = request.persistent;
      g_attached_since_unix_ns = s.start_unix_ns;
      StartFlusher();
      const std::string runtime = AttachedRuntimeName();
      out.kind = AttachOutcome::kOk;
      out.message = "pid=" + std::to_string(s.pid) + " runtime=" + (runtime.empty() ? "-" : runtime) +
                    " injected=" + (s.injected ? "1" : "0");
    }
  }
  pthread_mutex_unlock(&g_attach_mu);
  if (aggregator_fd >= 0) close(aggregator_fd);
  return out;
}

bool DetachNow(const char* reason) {
  pthread_mutex_lock(&g_attach_mu);
  const bool detached = DetachLocked(reason);
  pthread_mutex_unlock(&g_attach_mu);
  return detached;
}

void DetachBeforeExec() {
  pthread_mutex_lock(&g_attach_mu);
  DetachLocked("exec");
  pthread_mutex_unlock(&g_attach_mu);
}

bool AttachedNow(bool* persistent) {
  pthread_mutex_lock(&g_attach_mu);
  const bool attached = g_attached;
  if (persistent != nullptr) *persistent = g_persistent;
  pthread_mutex_unlock(&g_attach_mu);
  return attached;
}

void FinishAttachAtExit() {
  pthread_mutex_lock(&g_attach_mu);
  DetachLocked("exit");
  pthread_mutex_unlock(&g_attach_mu);
  RemoveControlSocket();
}

void StandbyChildAfterFork() {
  // The control thread and the attach were the parent's: this process starts afresh.
  g_attach_mu = PTHREAD_MUTEX_INITIALIZER;
  g_attached = false;
  g_persistent = false;
  g_workspan_hooks = false;
  std::string why;
  RestartControlServerInChild(&why);
}

void TrackUnseenThreads() {
  if (g_state->injected) {
    AdoptUnknownThreads();  // threads started before the GOT was redirected, or by raw clone
    RedirectProgramCalls(nullptr);  // libraries dlopen()ed during the window
    // A runtime that started during the window found no tool (it looks for one only in
    // the global scope, where an injected agent is not): attach to it here.
    if (AttachedRuntime() == nullptr) {
      std::string ignored;
      AttachRunningRuntime(&ignored);
    }
  }
  ReapAdoptedThreads();
}

void NoteConnectionState() {
  if (g_state->transport.lost()) WakeControlServer();
}

}  // namespace cilkprof::agent
