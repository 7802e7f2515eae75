#include "adopted_threads.h"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "agent_state.h"
#include "log.h"
#include "sample_source.h"

namespace cilkprof::agent {
namespace {

// Slots are written under the registry lock and read by signal handlers: a slot's
// record is stored before its tid (release), and a reaped slot's tid is cleared first.
constexpr size_t kMaxAdopted = 8192;
struct Slot {
  pid_t tid;
  ThreadRecord* record;
};
Slot g_slots[kMaxAdopted];
size_t g_slots_used = 0;  // high-water mark, atomic accesses
int g_any_adopted = 0;    // atomic accesses

constexpr size_t kMaxAgentThreads = 8;
pid_t g_agent_tids[kMaxAgentThreads];

// The kernel's CPU-time clock of thread `tid` (glibc's MAKE_THREAD_CPUCLOCK: what
// pthread_getcpuclockid returns on the thread itself).
clockid_t ThreadCpuClock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
}

bool IsAgentThread(pid_t tid) {
  for (pid_t known : g_agent_tids) {
    if (__atomic_load_n(&known, __ATOMIC_RELAXED) == tid) return true;
  }
  return false;
}

std::vector<pid_t> LiveTids() {
  std::vector<pid_t> tids;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return tids;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  closedir(dir);
  return tids;
}

bool ThreadAlive(pid_t tid) {
  return syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH;
}

// Registry lock held.
bool HasRecord(pid_t tid) {
  for (ThreadRecord* t = g_state->threads; t != nullptr; t = t->next) {
    if (t->tid == tid && !__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) return true;
  }
  return false;
}

// Registry lock held.
bool Publish(pid_t tid, ThreadRecord* record) {
  const size_t used = __atomic_load_n(&g_slots_used, __ATOMIC_RELAXED);
  size_t index = used;
  for (size_t i = 0; i < used; ++i) {
    if (__atomic_load_n(&g_slots[i].tid, __ATOMIC_RELAXED) == 0) {
      index = i;
      break;
    }
  }
  if (index == kMaxAdopted) return false;
  __atomic_store_n(&g_slots[index].record, record, __ATOMIC_RELAXED);
  __atomic_store_n(&g_slots[index].tid, tid, __ATOMIC_RELEASE);
  if (index == used) __atomic_store_n(&g_slots_used, used + 1, __ATOMIC_RELEASE);
  __atomic_store_n(&g_any_adopted, 1, __ATOMIC_RELEASE);
  return true;
}

}  // namespace

void NoteAgentThread(pid_t tid) {
  for (pid_t& slot : g_agent_tids) {
    pid_t expected = 0;
    if (__atomic_compare_exchange_n(&slot, &expected, tid, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

void ForgetAgentThread(pid_t tid) {
  for (pid_t& slot : g_agent_tids) {
    pid_t expected = tid;
    if (__atomic_compare_exchange_n(&slot, &expected, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

size_t AdoptUnknownThreads() {
  AgentState& s = *g_state;
  size_t adopted = 0;
  for (pid_t tid : LiveTids()) {
    if (IsAgentThread(tid)) continue;
    pthread_mutex_lock(&s.registry_mu);
    const bool known = HasRecord(tid);
    pthread_mutex_unlock(&s.registry_mu);
    if (known) continue;

    auto* t = new (std::nothrow) ThreadRecord();
    if (t == nullptr) break;
    t->in_handler = 1;  // until its thread claims it (ClaimAdoptedRecord)
    t->tid = tid;
    t->thread_index = TakeThreadIndex();
    t->cpu_clock = ThreadCpuClock(tid);
    CctOptions options;
    options.max_nodes = s.config.max_nodes;
    if (!t->cct.Init(options)) {
      LogLine("cannot map memory for the calling-context tree of thread " + std::to_string(tid) +
              ": " + ErrnoText(errno) + "; this thread is not profiled");
      delete t;
      continue;
    }
    t->timeline.Ensure();  // with the timeline on (issue 16)
    InitSampleClock(t, s.sampler);

    pthread_mutex_lock(&s.registry_mu);
    if (!Publish(tid, t)) {
      pthread_mutex_unlock(&s.registry_mu);
      t->cct.Destroy();
      delete t;
      break;
    }
    t->next = s.threads;
    s.threads = t;
    std::string error;
    const bool armed = __atomic_load_n(&g_sampling, __ATOMIC_ACQUIRE) == 0 || ArmThread(t, s.sampler, &error);
    pthread_mutex_unlock(&s.registry_mu);
    if (!armed) LogLine("thread " + std::to_string(tid) + " is not sampled: " + error);
    ++adopted;
  }
  return adopted;
}

void ReapAdoptedThreads() {
  if (__atomic_load_n(&g_any_adopted, __ATOMIC_ACQUIRE) == 0) return;
  AgentState& s = *g_state;
  pthread_mutex_lock(&s.registry_mu);
  const size_t used = __atomic_load_n(&g_slots_used, __ATOMIC_RELAXED);
  for (size_t i = 0; i < used; ++i) {
    const pid_t tid = __atomic_load_n(&g_slots[i].tid, __ATOMIC_RELAXED);
    if (tid == 0 || ThreadAlive(tid)) continue;
    ThreadRecord* t = g_slots[i].record;
    __atomic_store_n(&g_slots[i].tid, 0, __ATOMIC_RELEASE);
    // Its thread is gone: no handler can be using the record.
    ReleaseThreadSource(t);
    __atomic_store_n(&t->exited, true, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&s.registry_mu);
}

void ForgetAdoptedRecord(const ThreadRecord* record) {
  const size_t used = __atomic_load_n(&g_slots_used, __ATOMIC_RELAXED);
  for (size_t i = 0; i < used; ++i) {
    if (__atomic_load_n(&g_slots[i].record, __ATOMIC_RELAXED) == record) {
      __atomic_store_n(&g_slots[i].tid, 0, __ATOMIC_RELEASE);
    }
  }
}

void ForgetAllAdoptedAfterFork() {
  const size_t used = __atomic_load_n(&g_slots_used, __ATOMIC_RELAXED);
  for (size_t i = 0; i < used; ++i) __atomic_store_n(&g_slots[i].tid, 0, __ATOMIC_RELEASE);
  for (pid_t& tid : g_agent_tids) tid = 0;
}

ThreadRecord* ClaimAdoptedRecord() {
  if (__atomic_load_n(&g_any_adopted, __ATOMIC_ACQUIRE) == 0) return nullptr;
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  const size_t used = __atomic_load_n(&g_slots_used, __ATOMIC_ACQUIRE);
  for (size_t i = 0; i < used; ++i) {
    if (__atomic_load_n(&g_slots[i].tid, __ATOMIC_ACQUIRE) != self) continue;
    ThreadRecord* t = __atomic_load_n(&g_slots[i].record, __ATOMIC_RELAXED);
    tls_thread = t;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->in_handler = 0;
    return t;
  }
  return nullptr;
}

}  // namespace cilkprof::agent
