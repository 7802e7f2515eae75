// The agent's life: start-up in the library constructor, thread registration, the
// final flush at exit, fork, exec and dlclose.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <new>

#include "adopted_threads.h"
#include "agent_state.h"
#include "alt_stack.h"
#include "fatal_signals.h"
#include "late_attach.h"
#include "locks/lock_report.h"
#include "log.h"
#include "ompt/ompt_tool.h"
#include "real_functions.h"
#include "runtime_view.h"
#include "signal_mask.h"
#include "standby.h"
#include "thread_end_sample.h"
#include "timeline/timeline_control.h"
#include "unsampled.h"

namespace cilkprof::agent {

AgentState* g_state = nullptr;
int g_sampling = 0;
unwinder::Mode g_handler_mode = unwinder::Mode::kDwarf;
__thread ThreadRecord* tls_thread __attribute__((tls_model("initial-exec"))) = nullptr;
__thread int tls_in_loader __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// The state is never destroyed: threads may still run (and exit) after exit() began.
alignas(AgentState) unsigned char g_state_storage[sizeof(AgentState)];

pid_t CurrentTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Whether LD_PRELOAD names this library (the way cilkprof run and service units load it).
bool PreloadedByName() {
  const char* preload = getenv("LD_PRELOAD");
  return preload != nullptr && strstr(preload, "cilkprof_agent") != nullptr;
}

void LockAll() {
  pthread_mutex_lock(&g_state->flush_mu);
  pthread_mutex_lock(&g_state->signal_mu);
  pthread_mutex_lock(&g_state->registry_mu);
}
void UnlockAll() {
  pthread_mutex_unlock(&g_state->registry_mu);
  pthread_mutex_unlock(&g_state->signal_mu);
  pthread_mutex_unlock(&g_state->flush_mu);
}

}  // namespace

void DisarmAllThreads() {
  pthread_mutex_lock(&g_state->registry_mu);
  for (ThreadRecord* t = g_state->threads; t != nullptr; t = t->next) DisarmThread(t);
  pthread_mutex_unlock(&g_state->registry_mu);
}

bool ArmAllLiveThreads() {
  bool ok = true;
  pthread_mutex_lock(&g_state->registry_mu);
  for (ThreadRecord* t = g_state->threads; t != nullptr; t = t->next) {
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) continue;
    std::string error;
    ok = ArmThread(t, g_state->sampler, &error) && ok;
  }
  pthread_mutex_unlock(&g_state->registry_mu);
  return ok;
}

// Stops sampling, sends what is left and a Goodbye, waits a bounded time for the
// aggregator, closes. Returns false when there was nothing to do.
// With sampling stopped and the flusher not flushing any more (joined, or the calling
// thread itself): the final flush, the Goodbye, a bounded wait for the aggregator, and
// the end of the connection.
void FlushAndSayGoodbye(const char* reason) {
  AgentState& s = *g_state;
  const bool attach_window = s.standby;
  DisarmAllThreads();
  DrainPendingSamples();
  pthread_mutex_lock(&s.flush_mu);
  // The unsampled tails and the CPU of unseen threads are process-lifetime accounts
  // (unsampled.h): an attach window has neither.
  if (!attach_window) MeasureLiveThreadsEnd();
  pthread_mutex_lock(&s.registry_mu);
  locks::MeasureOpenWaits(s.threads);  // a wait still going on (issue 14)
  pthread_mutex_unlock(&s.registry_mu);
  FlushLocked();
  if (attach_window) workspan::FlushWorkSpanForDetach();  // the window's (late_attach.h)
  GoodbyeMsg goodbye;
  goodbye.end_unix_ns = UnixNowNs();
  goodbye.reason = reason;
  goodbye.unseen_thread_cpu_ns = attach_window ? 0 : TakeUnseenThreadCpuNs();
  goodbye.runtime = AttachedRuntimeName();
  s.transport.EnqueueGoodbye(EncodeGoodbyeFrame(goodbye));
  s.transport.Drain(kExitDrainMs);
  s.transport.Close();
  __atomic_store_n(&s.shut_down, true, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&s.flush_mu);
}

namespace {

bool FinishConnection(const char* reason) {
  if (!AgentActive()) return false;
  __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
  StopFlusher();
  FlushAndSayGoodbye(reason);  // measures first whether the signal was blocked
  SetKeptSignal(0);            // no more samples: the masks are the program's again
  return true;
}

void AtExit() {
  if (g_state == nullptr) return;
  if (getpid() != g_state->pid) {
    // A child made without fork handlers (vfork, _Fork, clone): the connection is
    // the parent's. Leave it alone.
    return;
  }
  if (g_state->standby) {
    FinishAttachAtExit();  // the attach, if any, ends with the program (standby.cc)
    return;
  }
  FinishConnection("exit");
}

void OnThreadKeyDestroyed(void* record) {
  // Backstop for threads that end without returning or calling pthread_exit
  // (cancellation): the key destructor still runs on the exiting thread.
  if (record != nullptr && tls_thread == record) UnregisterCurrentThread();
}

void PrepareFork() {
  if (g_state != nullptr) LockAll();
}
void ParentAfterFork() {
  if (g_state != nullptr) UnlockAll();
}

void FreeRecord(ThreadRecord* t) {
  t->cct.Destroy();
  delete t;
}

// The fork child: only the forking thread exists. Its inherited CCT data belongs to
// the parent's profile, so it is dropped, never sent twice.
void ChildAfterFork() {
  if (g_state == nullptr) return;
  AgentState& s = *g_state;
  UnlockAll();  // taken by PrepareFork on this very thread
  locks::ResetLocksAfterFork();  // the waiting threads do not exist here (issue 14)
  ompt::AfterForkInChild();      // nor the parent's other OpenMP threads (issue 17)
  const bool was_active = !s.shut_down && s.pid == getppid();
  s.flusher_running = false;
  if (s.wake_fd >= 0) close(s.wake_fd);
  s.wake_fd = -1;
  s.transport.Abandon();

  ThreadRecord* self = tls_thread;
  if (self != nullptr) self->in_handler = 1;
  for (ThreadRecord* t = s.threads; t != nullptr;) {
    ThreadRecord* next = t->next;
    ForgetInheritedSource(t);
    // This thread keeps its own (alt_stack.h); the others do not exist here.
    UnmapInheritedAltStack(__atomic_load_n(&t->alt_stack, __ATOMIC_ACQUIRE));
    if (t != self) FreeRecord(t);
    t = next;
  }
  s.threads = nullptr;
  if (self != nullptr) {
    tls_thread = nullptr;
    pthread_setspecific(s.exit_key, nullptr);
    FreeRecord(self);
  }
  ForgetAllAdoptedAfterFork();
  s.pid = getpid();
  s.retired = RetiredThreads();  // the parent's ended threads are in the parent's profile

  if (s.standby) {
    // The child is a standby process of its own, never attached at birth.
    __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
    s.shut_down = true;
    if (was_active) RestoreProgramDisposition();
    SetKeptSignal(0);
    s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    StandbyChildAfterFork();
    return;
  }
  if (!was_active || !s.config.follow_fork) {
    __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
    s.shut_down = true;
    if (was_active) RestoreProgramDisposition();
    SetKeptSignal(0);
    return;
  }
  NoteCpuBase();
  s.start_unix_ns = UnixNowNs();
  s.hello_sent = false;
  s.transport.Configure(s.config.socket, s.config.spill_dir, s.pid);
  s.modules.ResendAll();
  __atomic_store_n(&s.next_thread_index, 0u, __ATOMIC_RELAXED);
  __atomic_store_n(&g_sampling, 1, __ATOMIC_RELEASE);
  RegisterCurrentThread(TakeThreadIndex());
  s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  StartFlusher();
}

}  // namespace

bool RegisterLifecycleHooks(std::string* why) {
  AgentState* s = g_state;
  if (pthread_key_create(&s->exit_key, OnThreadKeyDestroyed) != 0) {
    *why = "pthread_key_create failed";
    return false;
  }
  s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd < 0) {
    *why = "eventfd failed: " + ErrnoText(errno);
    return false;
  }
  pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  atexit(AtExit);
  return true;
}

AgentState* NewAgentState(const Config& config) {
  AgentState* s = new (g_state_storage) AgentState();
  s->shut_down = true;  // AgentActive() stays false until start-up has succeeded
  g_state = s;
  s->config = config;
  s->pid = getpid();
  s->start_unix_ns = UnixNowNs();
  s->argv = ReadCommandLine();
  return s;
}

// The sample source and the sampling signal with its handler; false (with the reason
// logged) when the agent cannot sample and must stay inactive.
bool SetUpSampling(AgentState* s) {
  const Config& config = s->config;
  if (config.clock == ClockKind::kCpu) {
    std::string why;
    if (config.sample_source == SampleSourceChoice::kTimer) {
      s->sampler.use_perf = false;
    } else if (!PerfEventsAvailable(&why)) {
      s->sampler.use_perf = false;
      const std::string warning =
          why + "; sampling with timer_create(CLOCK_THREAD_CPUTIME_ID) instead (lower "
                "precision; allow perf events with sysctl kernel.perf_event_paranoid=2 or lower)";
      s->warnings.push_back(warning);
      LogLine(warning);
    }
  } else {
    s->sampler.use_perf = false;
  }

  std::string warning;
  const int signo = ChooseInitialSignal(config.signal, &warning);
  if (!warning.empty()) {
    s->warnings.push_back(warning);
    LogLine(warning);
  }
  std::string error;
  if (signo == 0 || !InstallSampleHandler(signo, &error)) {
    LogLine("agent inactive: " + (signo == 0 ? warning : error));
    return false;
  }
  s->sampler.signo = signo;
  return true;
}

namespace {

void Start() {
  real::ResolveAll();
  FindAgentText();
  FindUnwindLibrary();
  // The agent's own frames (the probe, the thread start wrapper) never show in a path.
  ElideModuleOf(reinterpret_cast<const void*>(&CilkprofSampleHandler));
  std::vector<std::string> errors;
  Config config = ParseConfig([](const char* name) { return getenv(name); }, &errors);
  SetQuiet(config.quiet);
  if (!config.standby && config.socket.empty() && !PreloadedByName()) {
    // Loaded by dlopen, not preloaded: `cilkprof attach`'s injection, which starts the
    // agent itself (cilkprof_agent_start_injected), or a program that loads it on its
    // own. Either way the program's stderr is not ours to write to.
    return;
  }
  for (const std::string& e : errors) LogLine(e);
  if (config.standby) {
    StartStandby(config, /*injected=*/false);
    return;
  }
  if (config.socket.empty()) {
    LogInfo("agent inactive: CILKPROF_SOCKET is not set, so there is no aggregator to send "
            "samples to (run the program with `cilkprof run -- PROGRAM`)");
    return;
  }

  AgentState* s = NewAgentState(config);
  s->transport.Configure(config.socket, config.spill_dir, s->pid);
  s->transport.SetTcpToken(config.tcp_token, config.tcp_auth_problem);
  InstallSnapshot();

  const char* unwinder_error = "unknown error";
  const bool unwinder_ok = unwinder::Initialize(&unwinder_error);
  if (!unwinder_ok) {
    LogLine(std::string("agent inactive: the stack unwinder could not start: ") + unwinder_error);
    return;
  }

  s->sampler.clock = config.clock;
  s->sampler.period_ns = config.period_ns;
  // CILKPROF_SAMPLE_SOURCE=none: no source, no signal and no handler for one; the rest
  // of the agent (threads, work/span, flushes, probes, crash flush) runs as ever.
  s->sampler.sampled = config.sample_source != SampleSourceChoice::kNone;
  g_handler_mode = config.unwind == UnwindKind::kDwarf ? unwinder::Mode::kDwarf
                                                         : unwinder::Mode::kFramePointer;

  if (s->sampler.sampled && !SetUpSampling(s)) return;
  // OpenMP without the agent's OMPT tool (OMP_TOOL=disabled, another tool first): said
  // in the Hello, which the flusher sends before libomp starts the tool.
  std::vector<std::string> openmp_warnings;
  ompt::NoteOpenMpWithoutTool(/*attach=*/false, /*injected=*/false, &openmp_warnings);
  for (const std::string& warning : openmp_warnings) {
    s->warnings.push_back(warning);
    LogLine(warning);
  }

  std::string why;
  if (!RegisterLifecycleHooks(&why)) {
    LogLine("agent inactive: " + why);
    return;
  }

  InstallFatalSignalHandlers();  // the last flush before a signal ends the program
  NoteCpuBase();
  // From here on the program cannot block the sampling signal (signal_mask.h); without
  // sampling there is none (0).
  SetKeptSignal(s->sampler.signo);
  s->shut_down = false;
  __atomic_store_n(&g_sampling, 1, __ATOMIC_RELEASE);
  if (config.timeline) timeline::StartTimeline(config.timeline_events);  // issue 16
  RegisterCurrentThread(TakeThreadIndex());
  StartFlusher();
}

__attribute__((constructor)) void AgentConstructor() { Start(); }
// Backstop when atexit handlers did not run to the end (a destructor is all we get).
__attribute__((destructor)) void AgentDestructor() { AtExit(); }

}  // namespace

namespace {

// How long _exit waits for the flusher's final flush: the transport's own bound plus
// a second for the flush itself. If the flusher cannot finish (it waits for a lock that
// the code _exit interrupted holds), the program exits anyway and only the samples
// since the last periodic flush are lost; it is never kept from exiting for longer.
constexpr int kUnderscoreExitWaitMs = kExitDrainMs + 1000;

}  // namespace

void FinishBeforeUnderscoreExit() {
  AgentState* s = g_state;
  if (s == nullptr || __atomic_load_n(&s->shut_down, __ATOMIC_ACQUIRE) || getpid() != s->pid) return;
  if (!s->flusher_running || pthread_equal(pthread_self(), s->flusher)) return;
  __atomic_store_n(&g_sampling, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&s->exit_requested, 1, __ATOMIC_RELEASE);
  const uint64_t one = 1;
  (void)!write(s->wake_fd, &one, sizeof one);
  for (int waited = 0; waited < kUnderscoreExitWaitMs; waited += 5) {
    if (__atomic_load_n(&s->exit_flushed, __ATOMIC_ACQUIRE)) return;
    poll(nullptr, 0, 5);
  }
}

void FinishOnFlusherForUnderscoreExit() {
  FlushAndSayGoodbye("exit");  // the exiting thread stopped sampling already
  __atomic_store_n(&g_state->exit_flushed, 1, __ATOMIC_RELEASE);
}

bool AgentActive() {
  return g_state != nullptr && !g_state->shut_down && getpid() == g_state->pid;
}

uint32_t TakeThreadIndex() {
  if (g_state == nullptr) return 0;
  return __atomic_fetch_add(&g_state->next_thread_index, 1u, __ATOMIC_RELAXED);
}

void RegisterCurrentThread(uint32_t thread_index) {
  if (!AgentActive() || tls_thread != nullptr) return;
  if (ThreadRecord* adopted = ClaimAdoptedRecord()) {
    // Adopted (adopted_threads.h) between its start and this call: the record is
    // already armed. It becomes an ordinary one, which unregisters itself.
    pthread_mutex_lock(&g_state->registry_mu);
    ForgetAdoptedRecord(adopted);
    pthread_mutex_unlock(&g_state->registry_mu);
    adopted->alt_stack = ProvideAltStack();
    pthread_setspecific(g_state->exit_key, adopted);
    return;
  }
  auto* t = new (std::nothrow) ThreadRecord();
  if (t == nullptr) return;
  t->in_handler = 1;  // no sample may use the record before it is complete
  t->tid = CurrentTid();
  t->thread_index = thread_index;
  pthread_getcpuclockid(pthread_self(), &t->cpu_clock);
  CctOptions options;
  options.max_nodes = g_state->config.max_nodes;
  if (!t->cct.Init(options)) {
    LogLine("cannot map memory for the calling-context tree of thread " + std::to_string(t->tid) +
            ": " + ErrnoText(errno) + "; this thread is not profiled");
    delete t;
    return;
  }
  t->timeline.Ensure();  // with the timeline on (issue 16); none is no error
  unwinder::PrepareThread();
  // So that a stack overflow on this thread still reaches the last flush.
  t->alt_stack = ProvideAltStack();
  // A thread may start with the signal blocked by a mask the interposed functions
  // never saw (pthread_attr_setsigmask_np, a raw system call, exec from such a thread).
  OpenKeptSignalOnThisThread();
  InitSampleClock(t, g_state->sampler);
  tls_thread = t;
  pthread_setspecific(g_state->exit_key, t);
  // The record is complete: samples may use it from the moment its source is armed
  // (a thread's first interval may be as short as 10 us: sample_interval.h; a sample
  // dropped here would be charged to the next one).
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t->in_handler = 0;

  pthread_mutex_lock(&g_state->registry_mu);
  t->next = g_state->threads;
  g_state->threads = t;
  std::string error;
  const bool armed = __atomic_load_n(&g_sampling, __ATOMIC_ACQUIRE) == 0 ||
                     ArmThread(t, g_state->sampler, &error);
  pthread_mutex_unlock(&g_state->registry_mu);
  if (!armed) LogLine("thread " + std::to_string(t->tid) + " is not sampled: " + error);
}

void UnregisterCurrentThread() {
  ThreadRecord* t = tls_thread;
  if (t == nullptr || g_state == nullptr) return;
  t->in_handler = 1;
  tls_thread = nullptr;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  pthread_setspecific(g_state->exit_key, nullptr);
  prctl(PR_GET_NAME, t->exit_name, 0, 0, 0);
  ThreadEnd end = MeasureOwnEnd(t);
  if (!end.signal_blocked && __atomic_load_n(&g_sampling, __ATOMIC_ACQUIRE) != 0) {
    const uint64_t due = DueSampleWeight(t, end.clock_ns);
    if (due != 0) {
      TakeDueSampleAtThreadEnd(t, due);
      end.due_sample_taken = true;
    }
  }
  pthread_mutex_lock(&g_state->registry_mu);
  ForgetAdoptedRecord(t);  // its end is seen here, not by the reaper
  ReleaseThreadSource(t);  // no handler can use it any more: in_handler is set
  RecordOwnEnd(t, end);
  __atomic_store_n(&t->exited, true, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_state->registry_mu);
  // Cleared before the unmap: a fork child that still sees it also still has it.
  __atomic_store_n(&t->alt_stack, nullptr, __ATOMIC_RELEASE);
  ReleaseAltStack();
}

bool PrepareForExec() {
  // An attach ends with Goodbye("exec"); a failed exec leaves the agent in standby,
  // detached, with nothing to resume (standby.h).
  if (g_state != nullptr && g_state->standby && getpid() == g_state->pid) {
    DetachBeforeExec();
    return false;
  }
  if (!AgentActive()) return false;
  return FinishConnection("exec");
}

void ResumeAfterFailedExec() {
  AgentState& s = *g_state;
  pthread_mutex_lock(&s.flush_mu);
  // The old connection said Goodbye; a new one starts with a new Hello and all nodes.
  s.shut_down = false;
  s.hello_sent = false;
  s.transport.Abandon();
  s.transport.Configure(s.config.socket, s.config.spill_dir, s.pid);
  s.modules.ResendAll();
  pthread_mutex_lock(&s.registry_mu);
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) {
    t->builder.ResendNodes();
    t->announced = false;
    t->sent_name.clear();
  }
  pthread_mutex_unlock(&s.registry_mu);
  ReopenLiveThreads();
  pthread_mutex_unlock(&s.flush_mu);
  SetKeptSignal(s.sampler.signo);
  __atomic_store_n(&g_sampling, 1, __ATOMIC_RELEASE);
  ArmAllLiveThreads();
  StartFlusher();
}

void FlushForDlclose() {
  if (!AgentActive()) return;
  pthread_mutex_lock(&g_state->flush_mu);
  FlushLocked();
  pthread_mutex_unlock(&g_state->flush_mu);
}

void AfterDlclose() {
  if (!AgentActive()) return;
  pthread_mutex_lock(&g_state->flush_mu);
  g_state->modules.RefreshIfChanged();
  pthread_mutex_unlock(&g_state->flush_mu);
}

void FreeExitedRecord(ThreadRecord* t) { FreeRecord(t); }

}  // namespace cilkprof::agent
