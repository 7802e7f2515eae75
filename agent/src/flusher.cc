// The flusher thread: every CILKPROF_FLUSH_MS it turns what the threads' CCTs gained
// into Delta frames and hands them to the transport. It is not a profiled thread (no
// sample source, no record) and blocks every signal, so the program's process-directed
// signals always go to the program's own threads.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstdint>

#include "agent_state.h"
#include "log.h"
#include "metrics.h"
#include "real_functions.h"
#include "unsampled.h"

namespace cilkprof::agent {
namespace {

// Entries per ThreadDelta batch and the size at which a Delta frame is cut, far below
// the aggregator's 64 MiB frame limit.
constexpr size_t kMaxEntriesPerBatch = 100000;
constexpr size_t kFrameBudgetBytes = 8u << 20;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
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
  const std::string cmdline = ReadSmallFile("/proc/self/cmdline");
  for (size_t pos = 0; pos < cmdline.size();) {
    size_t end = cmdline.find('\0', pos);
    if (end == std::string::npos) end = cmdline.size();
    h.argv.push_back(cmdline.substr(pos, end - pos));
    pos = end + 1;
  }
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
  return h;
}

bool HasContent(const ThreadDeltaMsg& d) {
  return !d.nodes.empty() || !d.metrics.empty() || !d.counters.IsZero() || d.exited ||
         !d.name.empty();
}

void* FlusherMain(void*) {
  AgentState& s = *g_state;
  pthread_mutex_lock(&s.flush_mu);
  s.transport.EnsureOpen();
  pthread_mutex_unlock(&s.flush_mu);

  const uint64_t period_ns = uint64_t{s.config.flush_ms} * 1000000ull;
  uint64_t next_flush = MonotonicNs() + period_ns;
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

    pthread_mutex_lock(&s.flush_mu);
    if (MonotonicNs() >= next_flush) {
      FlushLocked();
      next_flush = MonotonicNs() + period_ns;
    } else {
      s.transport.Pump();
    }
    pthread_mutex_unlock(&s.flush_mu);
  }
  NoteFlusherCpu();
  return nullptr;
}

// Delta frames declaring every load module and every node sent so far, in batches
// (Transport::SetRedeclaration). Runs under flush_mu, possibly in the middle of
// FlushLocked: it reads the builders' counts and the module table, changes nothing.
std::string RedeclarationFrames() {
  AgentState& s = *g_state;
  std::string frames;
  DeltaMsg delta;
  delta.modules = s.modules.Declarations();
  pthread_mutex_lock(&s.registry_mu);
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) {
    std::vector<NewNodeMsg> nodes;
    t->builder.DeclareSent(t->cct, &s.modules, &nodes);
    // Batches like FlushLocked's (a thread may appear more than once in a Delta; parents
    // always precede their children).
    for (size_t from = 0; from < nodes.size(); from += kMaxEntriesPerBatch) {
      ThreadDeltaMsg d;
      d.tid = static_cast<uint32_t>(t->tid);
      d.thread_index = t->thread_index;
      const size_t to = std::min(nodes.size(), from + kMaxEntriesPerBatch);
      d.nodes.assign(nodes.begin() + static_cast<std::ptrdiff_t>(from),
                     nodes.begin() + static_cast<std::ptrdiff_t>(to));
      delta.threads.push_back(std::move(d));
      frames += EncodeDeltaFrame(delta);
      delta = DeltaMsg();
    }
  }
  pthread_mutex_unlock(&s.registry_mu);
  if (!delta.modules.empty() || !delta.threads.empty()) frames += EncodeDeltaFrame(delta);
  return frames;
}

}  // namespace

void InstallRedeclaration() { g_state->transport.SetRedeclaration(RedeclarationFrames); }

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
  s.transport.EnsureOpen();
  if (!s.hello_sent) {
    s.transport.EnqueueHello(EncodeHelloFrame(BuildHello(s)));
    s.hello_sent = true;
  }
  s.modules.BeginCycle();
  s.modules.RefreshIfChanged();

  std::vector<ThreadRecord*> threads;
  pthread_mutex_lock(&s.registry_mu);
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) threads.push_back(t);
  pthread_mutex_unlock(&s.registry_mu);

  DeltaMsg delta;
  size_t delta_bytes = 0;
  // Sends what `delta` holds, with the modules discovered so far (the nodes in it may
  // refer to them, so they travel in the same frame, ahead of the threads).
  auto emit = [&]() {
    std::vector<LoadModuleMsg> modules = s.modules.TakeChanges();
    delta.modules.insert(delta.modules.end(), modules.begin(), modules.end());
    if (delta.modules.empty() && delta.threads.empty()) return;
    s.transport.Enqueue(EncodeDeltaFrame(delta));
    delta = DeltaMsg();
    delta_bytes = 0;
  };

  std::vector<ThreadRecord*> finished;
  for (ThreadRecord* t : threads) {
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
      if (done && exited) d.exited = true;
      if (HasContent(d) || (first_batch && !t->announced)) {
        t->announced = true;
        delta_bytes += EncodedSizeBound(d);
        delta.threads.push_back(std::move(d));
      }
      first_batch = false;
      if (delta_bytes >= kFrameBudgetBytes) emit();
    }
    if (exited) finished.push_back(t);
  }
  emit();

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
    for (ThreadRecord* t : finished) FreeExitedRecord(t);
  }
  s.transport.Pump();
}

}  // namespace cilkprof::agent
