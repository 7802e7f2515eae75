#include "unsampled.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent_state.h"
#include "sample_source.h"
#include "signal_mask.h"

namespace cilkprof::agent {
namespace {

bool ReadClock(clockid_t clock, uint64_t* ns) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return false;  // e.g. the thread has ended
  *ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  return true;
}

// Whether `signo` is in the SigBlk mask of thread `tid` of this process (proc(5)).
bool SignalBlockedInThread(pid_t tid, int signo) {
  if (signo <= 0 || signo > 64) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/status", static_cast<int>(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[8192];
  size_t used = 0;
  while (used < sizeof text - 1) {
    const ssize_t n = read(fd, text + used, sizeof text - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  text[used] = '\0';
  const char* line = std::strstr(text, "\nSigBlk:");
  if (line == nullptr) return false;
  const unsigned long long mask = std::strtoull(line + std::strlen("\nSigBlk:"), nullptr, 16);
  return ((mask >> (signo - 1)) & 1u) != 0;
}


// Registry lock held. For a timer: the tail from the later of the last sample and the
// previous measurement (after a failed exec) up to `now`, which no sample covers (each
// weighs the time since the previous one). For a perf event: nothing while its next
// sample is not due (the samples so far weigh the mean each, and stand for the tail in
// expectation), else the weight of the due sample nobody took (the signal blocked, or
// measured from another thread at the final flush), unless `due_taken`.
// Without sampling (CILKPROF_SAMPLE_SOURCE=none) no sample was due, so none is missing:
// nothing is recorded (the thread's whole time would otherwise count as its tail).
void RecordTail(ThreadRecord* t, uint64_t now, bool signal_blocked, bool due_taken = false) {
  if (t->end_measured) return;
  t->end_measured = true;
  if (!g_state->sampler.sampled) return;
  if (UsesPoissonIntervals(t)) {
    if (!due_taken) CounterAdd(&t->counters.unsampled_ns, DueSampleWeight(t, now));
  } else {
    const uint64_t from = std::max(__atomic_load_n(&t->last_clock_ns, __ATOMIC_RELAXED), t->end_clock_ns);
    if (now > from) CounterAdd(&t->counters.unsampled_ns, now - from);
  }
  t->end_clock_ns = std::max(now, t->end_clock_ns);
  if (signal_blocked && CounterRead(&t->counters.signal_blocked) == 0) {
    CounterAdd(&t->counters.signal_blocked, 1);
  }
}

}  // namespace

void NoteCpuBase() {
  AgentState& s = *g_state;
  uint64_t process = 0, own = 0;
  ReadClock(CLOCK_PROCESS_CPUTIME_ID, &process);
  ReadClock(CLOCK_THREAD_CPUTIME_ID, &own);
  s.cpu_base_ns = process > own ? process - own : 0;
  s.ended_threads_cpu_ns = 0;
  s.flusher_cpu_ns = 0;
  s.unseen_reported_ns = 0;
}

ThreadEnd MeasureOwnEnd(const ThreadRecord* t) {
  ThreadEnd end;
  end.clock_ns = __atomic_load_n(&t->last_clock_ns, __ATOMIC_RELAXED);
  ReadSampleClock(t, &end.clock_ns);
  ReadClock(CLOCK_THREAD_CPUTIME_ID, &end.cpu_ns);
  end.signal_blocked = KeptSignalBlockedOnThisThread();
  return end;
}

uint64_t DueSampleWeight(const ThreadRecord* t, uint64_t now) {
  if (!UsesPoissonIntervals(t)) return 0;
  const uint64_t start = __atomic_load_n(&t->interval_start_ns, __ATOMIC_RELAXED);
  const uint64_t interval = __atomic_load_n(&t->interval_ns, __ATOMIC_RELAXED);
  const uint64_t lag = __atomic_load_n(&t->lag_ns, __ATOMIC_RELAXED);
  // Due by the thread's schedule, which the armed event trails by `lag`.
  const uint64_t due = interval > lag ? interval - lag : 0;
  if (now <= start || now - start <= due) return 0;
  return WeighPoissonSample(t, g_state->sampler.period_ns, now);
}

void RecordOwnEnd(ThreadRecord* t, const ThreadEnd& end) {
  RecordTail(t, end.clock_ns, end.signal_blocked, end.due_sample_taken);
  g_state->ended_threads_cpu_ns += end.cpu_ns;
}

void MeasureLiveThreadsEnd() {
  AgentState& s = *g_state;
  const int signo = KeptSignal();
  pthread_mutex_lock(&s.registry_mu);
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) {
    uint64_t now = 0;
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) || !ReadSampleClock(t, &now)) continue;
    RecordTail(t, now, SignalBlockedInThread(t->tid, signo));
  }
  pthread_mutex_unlock(&s.registry_mu);
}

void ReopenLiveThreads() {
  AgentState& s = *g_state;
  pthread_mutex_lock(&s.registry_mu);
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) {
    if (!__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) t->end_measured = false;
  }
  pthread_mutex_unlock(&s.registry_mu);
}

void NoteFlusherCpu() {
  uint64_t cpu = 0;
  ReadClock(CLOCK_THREAD_CPUTIME_ID, &cpu);
  pthread_mutex_lock(&g_state->registry_mu);
  g_state->flusher_cpu_ns += cpu;
  pthread_mutex_unlock(&g_state->registry_mu);
}

uint64_t TakeUnseenThreadCpuNs() {
  AgentState& s = *g_state;
  if (!s.sampler.sampled) return 0;  // no thread was sampled: unseen ones miss nothing
  // The threads' clocks first, the process's last: the difference can only grow by
  // what runs in between, never go negative.
  pthread_mutex_lock(&s.registry_mu);
  uint64_t accounted = s.cpu_base_ns + s.ended_threads_cpu_ns + s.flusher_cpu_ns;
  for (ThreadRecord* t = s.threads; t != nullptr; t = t->next) {
    uint64_t cpu = 0;
    if (!__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) && ReadClock(t->cpu_clock, &cpu)) accounted += cpu;
  }
  pthread_mutex_unlock(&s.registry_mu);
  clockid_t flusher_clock;
  uint64_t cpu = 0;
  if (s.flusher_running && pthread_getcpuclockid(s.flusher, &flusher_clock) == 0 &&
      ReadClock(flusher_clock, &cpu)) {
    accounted += cpu;  // the _exit path: the final flush runs on the flusher itself
  }
  uint64_t process = 0;
  ReadClock(CLOCK_PROCESS_CPUTIME_ID, &process);
  const uint64_t unseen = process > accounted ? process - accounted : 0;
  const uint64_t increment = unseen > s.unseen_reported_ns ? unseen - s.unseen_reported_ns : 0;
  s.unseen_reported_ns += increment;
  return increment;
}

}  // namespace cilkprof::agent
