// The flusher thread: it turns what the threads' CCTs gained into Delta frames and
// hands them to the transport. It is not a profiled thread (no sample source, no
// record) and blocks every signal, so the program's process-directed signals always
// go to the program's own threads.
//
// When it flushes: once as soon as it starts (the connection, the Hello and the load
// modules are in place before the program has run for long, so that a crash or a
// kill early on still has them), then every interval, where the interval is 100
// times the CPU time the last flush cost, at least 100 ms and at most
// CILKPROF_FLUSH_MS (1000 ms by default): a flush that costs little is made often, so
// that a SIGKILL, which no handler sees, loses little (docs/AGENT.md, "Crashes and
// kills"), and the flusher never takes more than about 1% of a core.
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstdint>

#include "adopted_threads.h"
#include "agent_state.h"
#include "locks/lock_report.h"
#include "log.h"
#include "metrics.h"
#include "monotonic_clock.h"
#include "ompt/ompt_workspan.h"
#include "real_functions.h"
#include "retired_threads.h"
#include "standby.h"
#include "timeline/timeline_buffers.h"
#include "unsampled.h"
#include "workspan/workspan.h"

namespace cilkprof::agent {
namespace {

// Entries per ThreadDelta batch and the size at which a Delta frame is cut, far below
// the aggregator's 64 MiB frame limit.
constexpr size_t kMaxEntriesPerBatch = 100000;
constexpr size_t kFrameBudgetBytes = 8u << 20;
// The adaptive interval (see the top of this file).
constexpr uint64_t kMinFlushIntervalNs = 100000000;
constexpr uint64_t kFlushCostFactor = 100;

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string ReadSmallFile(const std::string& path) {
  std::string content;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return content;
}

std::string ThreadName(pid_t tid) {
  std::string name = ReadSmallFile("/proc/self/task/" + std::to_string(tid) + "/comm");
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
  return name;
}

HelloMsg BuildHello(const AgentState& s) {
  HelloMsg h;
  h.pid = static_cast<uint32_t>(s.pid);
  h.ppid = static_cast<uint32_t>(getppid());
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) h.executable.assign(exe, static_cast<size_t>(n));
  h.argv = s.argv.empty() ? ReadCommandLine() : s.argv;
  h.clock = ClockName(s.config.clock);
  h.sample_source = SampleSourceName(s.sampler);
  h.period_ns = s.sampler.period_ns;
  h.unwind_mode = UnwindName(s.config.unwind);
  for (const MetricInfo& m : kMetricInfo) h.metrics.push_back({m.name, m.unit, m.description});
  h.start_unix_ns = s.start_unix_ns;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) h.hostname = host;
  h.profiling_signal = static_cast<uint32_t>(s.sampler.signo);
  h.warnings = s.warnings;
  h.unix_minus_monotonic_ns = UnixNowNs() - MonotonicNs();  // the timeline's clock (issue 16)
  return h;
}

bool HasContent(const ThreadDeltaMsg& d) {
  return !d.nodes.empty() || !d.metrics.empty() || !d.counters.IsZero() || d.exited ||
         !d.name.empty();
}

// Collects ThreadDeltas into Delta frames of about kFrameBudgetBytes. Every frame
// carries the modules discovered since the previous one (its nodes may refer to
// them, so they travel in the same frame, ahead of the threads) and the flush's time.
class DeltaFrames {
 public:
  using Sink = std::function<void(std::string frame)>;
  explicit DeltaFrames(Sink sink) : sink_(std::move(sink)) {
    delta_.flush_unix_ns = UnixNowNs();
    delta_.process_cpu_ns = ProcessCpuNs();
  }
  void Add(ThreadDeltaMsg d) {
    bytes_ += EncodedSizeBound(d);
    delta_.threads.push_back(std::move(d));
    if (bytes_ >= kFrameBudgetBytes) Emit();
  }
  void Add(TimelineChunkMsg chunk) {
    bytes_ += EncodedSizeBound(chunk);
    delta_.timeline.push_back(std::move(chunk));
    if (bytes_ >= kFrameBudgetBytes) Emit();
  }
  void Emit() {
    std::vector<LoadModuleMsg> modules = g_state->modules.TakeChanges();
    delta_.modules.insert(delta_.modules.end(), modules.begin(), modules.end());
    if (delta_.modules.empty() && delta_.threads.empty() && delta_.locks.empty() && delta_.timeline.empty()) return;
    sink_(EncodeDeltaFrame(delta_));
    const uint64_t unix_ns = delta_.flush_unix_ns, cpu_ns = delta_.process_cpu_ns;
    delta_ = DeltaMsg();
    delta_.flush_unix_ns = unix_ns;
    delta_.process_cpu_ns = cpu_ns;
    bytes_ = 0;
  }
  DeltaMsg* delta() { return &delta_; }
  size_t* bytes() { return &bytes_; }

 private:
  Sink sink_;
  DeltaMsg delta_;
  size_t bytes_ = 0;
};

// What thread `t` gained since its builder's last report. `may_end`: send the
// thread's end once everything is reported (never in a snapshot: the next flush
// sends it, and nothing may follow a thread's end). Returns whether the thread had
// ended when its CCT was read: then everything it recorded has been reported.
bool AddThread(ThreadRecord* t, bool may_end, DeltaFrames* frames) {
  AgentState& s = *g_state;
  // Read `exited` before the CCT: whatever the thread wrote before exiting is then
  // visible, and a caught-up builder has sent all of it.
  const bool exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
  std::string name = exited ? std::string(t->exit_name) : ThreadName(t->tid);
  if (name.empty()) name = t->sent_name;
  t->builder.BeginCycle();
  bool done = false;
  bool first_batch = true;
  while (!done) {
    ThreadDeltaMsg d;
    d.tid = static_cast<uint32_t>(t->tid);
    d.thread_index = t->thread_index;
    done = t->builder.Build(t->cct, t->counters, &s.modules, kMaxEntriesPerBatch, &d);
    if (first_batch && (name != t->sent_name || !t->announced)) {
      d.name = name;
      t->sent_name = name;
    }
    if (done && exited && may_end) d.exited = true;
    if (HasContent(d) || (first_batch && !t->announced)) {
      t->announced = true;
      frames->Add(std::move(d));
    }
    first_batch = false;
  }
  return exited;
}

// Thread `t`'s timeline events since the last drain (issue 16), as a chunk; false if
// none. Drained BEFORE the thread's CCT is read (AddThread): every node an event names
// was inserted before the event was pushed, so the CCT read after it declares them, in
// a frame no later than the chunk's (the chunk is added after the thread's deltas).
bool DrainTimeline(ThreadRecord* t, TimelineChunkMsg* chunk) {
  if (!timeline::DrainChunk(t->timeline, chunk)) return false;
  chunk->tid = static_cast<uint32_t>(t->tid);
  chunk->thread_index = t->thread_index;
  return true;
}

// AddThread with the thread's timeline events: drained before it, added after it; for
// a thread that has ended, drained once more after it, so that its last events (pushed
// before `exited`, which AddThread read) go before its record is freed.
bool AddThreadWithTimeline(ThreadRecord* t, DeltaFrames* frames) {
  // Buffers for a thread that registered before the timeline was switched on (attach).
  if (!__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) t->timeline.Ensure();
  TimelineChunkMsg before;
  const bool has_before = DrainTimeline(t, &before);
  const bool exited = AddThread(t, /*may_end=*/true, frames);
  if (has_before) frames->Add(std::move(before));
  TimelineChunkMsg last;
  if (exited && DrainTimeline(t, &last)) frames->Add(std::move(last));
  return exited;
}

std::vector<ThreadRecord*> ThreadList() {
  AgentState& s = *g_state;
  std::vector<ThreadRecord*> threads;
  pthread_mutex_lock(&s.registry_mu);
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) threads.push_back(t);
  pthread_mutex_unlock(&s.registry_mu);
  return threads;
}

// Everything the process recorded so far, for a receiver that has seen none of it
// (Transport::SetSnapshot): every module; every live thread from zero (its builder
// starts over, so later deltas are increments from this snapshot); the ended threads
// (retired_threads.h); the work/span totals. Runs under flush_mu, possibly in the
// middle of FlushLocked (a frame the transport could not queue): everything that
// flush built so far is in the snapshot, and what it builds after is an increment.
std::string SnapshotFrames() {
  AgentState& s = *g_state;
  std::string out;
  s.modules.ResendAll();
  DeltaFrames frames([&out](std::string frame) { out += frame; });
  // Modules only the ended threads' nodes still refer to (unloaded since).
  for (const LoadModuleMsg& m : s.retired.modules()) {
    const bool in_table = std::any_of(s.modules.modules().begin(), s.modules.modules().end(),
                                      [&](const ModuleInfo& known) { return known.id == m.id; });
    if (!in_table) frames.delta()->modules.push_back(m);
  }
  for (ThreadRecord* t : ThreadList()) {
    t->builder = ThreadDeltaBuilder();
    t->announced = false;
    t->sent_name.clear();
    AddThread(t, /*may_end=*/false, &frames);
  }
  s.retired.AppendSnapshot(frames.delta(), frames.bytes(), kFrameBudgetBytes, kMaxEntriesPerBatch,
                           [&frames] { frames.Emit(); });
  locks::ResendAllLocks();  // the locks' totals from zero (issue 14)
  locks::AppendLockDeltas(&s.modules, &frames.delta()->locks);
  frames.Emit();
  std::vector<std::string> workspan;
  workspan::AppendSnapshotFrames(&workspan);
  ompt::workspan::AppendSnapshotFrames(&workspan);  // OpenMP programs' (at most one of the two measures)
  for (const std::string& frame : workspan) out += frame;
  return out;
}

void* FlusherMain(void*) {
  AgentState& s = *g_state;
  NoteAgentThread(static_cast<pid_t>(syscall(SYS_gettid)));
  const uint64_t longest_ns = uint64_t{s.config.flush_ms} * 1000000ull;
  const uint64_t shortest_ns = std::min(kMinFlushIntervalNs, longest_ns);
  uint64_t next_flush = MonotonicNs();  // the first flush right away
  bool first_flush = true;
  for (;;) {
    pthread_mutex_lock(&s.flush_mu);
    const int sock = s.transport.has_pending() ? s.transport.socket_fd() : -1;
    pthread_mutex_unlock(&s.flush_mu);

    const uint64_t now = MonotonicNs();
    const int timeout_ms = now >= next_flush ? 0 : static_cast<int>((next_flush - now) / 1000000 + 1);
    pollfd fds[2] = {{s.wake_fd, POLLIN, 0}, {sock, POLLOUT, 0}};
    poll(fds, sock >= 0 ? 2 : 1, timeout_ms);
    if (__atomic_load_n(&s.stop_flusher, __ATOMIC_ACQUIRE)) break;
    if (__atomic_load_n(&s.exit_requested, __ATOMIC_ACQUIRE)) {
      FinishOnFlusherForUnderscoreExit();  // the process is in _exit: nothing follows
      break;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t ignored;
      (void)!read(s.wake_fd, &ignored, sizeof ignored);
    }

    // Standby agents see no thread start before their first attach, an injected one
    // none at all (adopted_threads.h).
    if (s.standby && MonotonicNs() >= next_flush) TrackUnseenThreads();
    pthread_mutex_lock(&s.flush_mu);
    MoveClaimedSamplingSignal();  // the program claimed the sampling signal (signals.cc)
    if (MonotonicNs() >= next_flush) {
      // The cost is the flusher's CPU time (waiting for a core is no cost), not counting
      // the first flush, which connects and builds the Hello and the module table.
      const uint64_t started = ThreadCpuNs();
      FlushLocked();
      const uint64_t cost = first_flush ? 0 : ThreadCpuNs() - started;
      first_flush = false;
      next_flush = MonotonicNs() + std::clamp(cost * kFlushCostFactor, shortest_ns, longest_ns);
    } else {
      s.transport.Pump();
    }
    if (s.standby) NoteConnectionState();  // a lost connection ends the attach (standby.h)
    pthread_mutex_unlock(&s.flush_mu);
  }
  ForgetAgentThread(static_cast<pid_t>(syscall(SYS_gettid)));
  NoteFlusherCpu();
  return nullptr;
}

}  // namespace

void InstallSnapshot() { g_state->transport.SetSnapshot(SnapshotFrames); }

std::vector<std::string> ReadCommandLine() {
  std::vector<std::string> argv;
  const std::string cmdline = ReadSmallFile("/proc/self/cmdline");
  for (size_t pos = 0; pos < cmdline.size();) {
    size_t end = cmdline.find('\0', pos);
    if (end == std::string::npos) end = cmdline.size();
    argv.push_back(cmdline.substr(pos, end - pos));
    pos = end + 1;
  }
  return argv;
}

uint64_t UnixNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void StartFlusher() {
  AgentState& s = *g_state;
  if (s.flusher_running) return;
  __atomic_store_n(&s.stop_flusher, false, __ATOMIC_RELEASE);
  sigset_t all, old;
  sigfillset(&all);
  real::pthread_sigmask()(SIG_SETMASK, &all, &old);  // the new thread inherits "all blocked"
  const int rc = real::pthread_create()(&s.flusher, nullptr, FlusherMain, nullptr);
  real::pthread_sigmask()(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    LogLine("cannot start the flusher thread (" + ErrnoText(rc) +
            "); the profile will be sent at exit only");
    return;
  }
  s.flusher_running = true;
}

void StopFlusher() {
  AgentState& s = *g_state;
  if (!s.flusher_running) return;
  __atomic_store_n(&s.stop_flusher, true, __ATOMIC_RELEASE);
  const uint64_t one = 1;
  (void)!write(s.wake_fd, &one, sizeof one);
  pthread_join(s.flusher, nullptr);
  s.flusher_running = false;
}

void FlushLocked() {
  AgentState& s = *g_state;
  MoveClaimedSamplingSignal();  // its warning belongs in this flush's Hello
  s.transport.EnsureOpen();
  if (!s.hello_sent) {
    s.transport.EnqueueHello(EncodeHelloFrame(BuildHello(s)));
    s.hello_sent = true;
  }
  s.modules.BeginCycle();
  s.modules.RefreshIfChanged();

  DeltaFrames frames([&s](std::string frame) { s.transport.Enqueue(std::move(frame)); });
  std::vector<ThreadRecord*> finished;
  for (ThreadRecord* t : ThreadList()) {
    if (AddThreadWithTimeline(t, &frames)) finished.push_back(t);
  }
  locks::AppendLockDeltas(&s.modules, &frames.delta()->locks);  // per-lock totals (issue 14)
  frames.Emit();

  if (!finished.empty()) {
    pthread_mutex_lock(&s.registry_mu);
    for (ThreadRecord* t : finished) {
      for (ThreadRecord** link = &s.threads; *link != nullptr; link = &(*link)->next) {
        if (*link == t) {
          *link = t->next;
          break;
        }
      }
    }
    pthread_mutex_unlock(&s.registry_mu);
    // A later snapshot still needs what they recorded (retired_threads.h).
    for (ThreadRecord* t : finished) {
      s.retired.Add(*t, t->sent_name, &s.modules);
      FreeExitedRecord(t);
    }
  }
  s.transport.Pump();
}

}  // namespace cilkprof::agent
