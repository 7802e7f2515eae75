#include "sample_source.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "log.h"
#include "sample_interval.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

namespace cilkprof::agent {
namespace {

// The value the agent's timers carry in their signals (IsOwnSample).
const char kTimerCookie = 0;

// The event's period while the handler runs, in mean intervals: far longer than any
// handler, so that it never overflows in the middle of one.
constexpr uint64_t kHoldIntervals = 64;

int OpenTaskClock(pid_t tid, uint64_t period_ns) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = period_ns;
  attr.disabled = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

bool PointPerfAt(int fd, pid_t tid, int signo, std::string* error) {
  f_owner_ex owner{F_OWNER_TID, tid};
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETSIG, signo) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0) {
    *error = "configuring the perf event's signal failed: " + ErrnoText(errno);
    return false;
  }
  return true;
}

bool CreateTimer(ThreadRecord* t, const SamplerSettings& s, std::string* error) {
  sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = s.signo;
  ev.sigev_notify_thread_id = t->tid;
  ev.sigev_value.sival_ptr = const_cast<char*>(&kTimerCookie);
  const clockid_t clock = s.clock == ClockKind::kWall ? CLOCK_MONOTONIC : t->cpu_clock;
  timer_t timer;
  if (timer_create(clock, &ev, &timer) != 0) {
    *error = "timer_create failed: " + ErrnoText(errno);
    return false;
  }
  itimerspec spec;
  spec.it_interval.tv_sec = static_cast<time_t>(s.period_ns / 1000000000);
  spec.it_interval.tv_nsec = static_cast<long>(s.period_ns % 1000000000);
  spec.it_value = spec.it_interval;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    *error = "timer_settime failed: " + ErrnoText(errno);
    timer_delete(timer);
    return false;
  }
  t->timer = timer;
  t->has_timer = true;
  return true;
}

bool ReadClockNs(clockid_t clock, uint64_t* ns) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return false;
  *ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  return true;
}

bool ReadCount(int fd, uint64_t* ns) {
  uint64_t count = 0;
  if (read(fd, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return false;
  *ns = count;
  return true;
}

// Starts the thread's next interval at the event's count now. The event must be
// stopped (arming) or be the calling thread's own (its handler): no overflow can use
// the interval before it is complete.
bool StartInterval(ThreadRecord* t, uint64_t interval) {
  uint64_t start = 0;
  if (!ReadCount(t->perf_fd, &start) || ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &interval) != 0) {
    return false;
  }
  __atomic_store_n(&t->interval_start_ns, start, __ATOMIC_RELAXED);
  __atomic_store_n(&t->interval_ns, interval, __ATOMIC_RELAXED);
  return true;
}

// The next interval from the thread's generator (seeded on first use): the first one
// when sampling (re)starts, else the one after a sample (sample_interval.h).
uint64_t DrawInterval(ThreadRecord* t, uint64_t mean_ns, bool first) {
  uint64_t rng = __atomic_load_n(&t->interval_rng, __ATOMIC_RELAXED);
  if (rng == 0) {
    uint64_t salt = 0;
    ReadClockNs(CLOCK_MONOTONIC, &salt);
    rng = SeedSampleIntervals(static_cast<uint64_t>(t->tid), salt);
  }
  const uint64_t interval = first ? FirstSampleInterval(&rng, mean_ns) : NextSampleInterval(&rng, mean_ns);
  __atomic_store_n(&t->interval_rng, rng, __ATOMIC_RELAXED);
  return interval;
}

// Opens the thread's task-clock event, or re-enables the one a disarm stopped, with a
// fresh first interval (armed at the floor at least, the lag noted: sample_interval.h).
// The interval, the clock mark and the kind are in place before the event is enabled:
// its first overflow finds them.
bool ArmPerfEvent(ThreadRecord* t, const SamplerSettings& s, std::string* error) {
  const uint64_t due = DrawInterval(t, s.period_ns, /*first=*/true);
  const uint64_t first = ArmedFirstInterval(due, s.period_ns);
  __atomic_store_n(&t->lag_ns, first - due, __ATOMIC_RELAXED);
  const bool fresh = t->perf_fd < 0;
  if (fresh) {
    const int fd = OpenTaskClock(t->tid, first);  // disabled, its count at 0
    if (fd < 0) {
      *error = "perf_event_open(task-clock) failed: " + ErrnoText(errno);
      return false;
    }
    if (!PointPerfAt(fd, t->tid, s.signo, error)) {
      close(fd);
      return false;
    }
    t->perf_fd = fd;
  }
  const int previous_kind = __atomic_load_n(&t->source, __ATOMIC_RELAXED);
  if (StartInterval(t, first)) {
    __atomic_store_n(&t->last_clock_ns, __atomic_load_n(&t->interval_start_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    // From the first arming on, the thread's sampling clock is the event's count.
    if (previous_kind != kPerfSource) t->end_clock_ns = 0;
    __atomic_store_n(&t->source, kPerfSource, __ATOMIC_RELEASE);
    if (ioctl(t->perf_fd, PERF_EVENT_IOC_ENABLE, 0) == 0) return true;
    __atomic_store_n(&t->source, previous_kind, __ATOMIC_RELEASE);
  }
  *error = "starting the perf event failed: " + ErrnoText(errno);
  if (fresh) {
    close(t->perf_fd);
    t->perf_fd = -1;
  }
  return false;
}

}  // namespace

bool PerfEventsAvailable(std::string* why) {
  const int fd = OpenTaskClock(static_cast<pid_t>(syscall(SYS_gettid)), 1000000);
  if (fd < 0) {
    *why = "perf_event_open(task-clock) failed: " + ErrnoText(errno);
    return false;
  }
  close(fd);
  return true;
}

void InitSampleClock(ThreadRecord* t, const SamplerSettings& s) {
  t->sample_clock = s.clock == ClockKind::kWall ? CLOCK_MONOTONIC : t->cpu_clock;
  uint64_t now = 0;
  if (ReadClockNs(t->sample_clock, &now)) t->last_clock_ns = now;
}

bool ArmThread(ThreadRecord* t, const SamplerSettings& s, std::string* error) {
  if (!s.sampled) return true;  // the thread stays kNoSource: nothing to disarm or retarget
  const int kind = __atomic_load_n(&t->source, __ATOMIC_RELAXED);
  const bool wants_perf = s.clock == ClockKind::kCpu && s.use_perf;
  if (kind == kPerfSource || (kind == kNoSource && wants_perf)) {
    if (ArmPerfEvent(t, s, error)) return true;
    if (kind == kPerfSource) return false;  // its clock is the event's: no other source
    // Out of descriptors or a per-thread refusal: a timer still samples this thread.
  }
  if (!CreateTimer(t, s, error)) return false;
  __atomic_store_n(&t->source, kTimerSource, __ATOMIC_RELEASE);
  return true;
}

void DisarmThread(ThreadRecord* t) {
  if (t->perf_fd >= 0) ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
  if (t->has_timer) {
    timer_delete(t->timer);
    t->has_timer = false;
  }
}

void ReleaseThreadSource(ThreadRecord* t) {
  DisarmThread(t);
  if (t->perf_fd >= 0) close(t->perf_fd);
  t->perf_fd = -1;
}

void ForgetInheritedSource(ThreadRecord* t) {
  if (t->perf_fd >= 0) close(t->perf_fd);  // no ioctl: it would stop the parent's counter
  t->perf_fd = -1;
  t->has_timer = false;
}

bool RetargetThread(ThreadRecord* t, const SamplerSettings& s, std::string* error) {
  if (t->perf_fd >= 0) {
    if (fcntl(t->perf_fd, F_SETSIG, s.signo) != 0) {
      *error = "F_SETSIG failed: " + ErrnoText(errno);
      return false;
    }
    return true;
  }
  if (t->has_timer) {
    // A POSIX timer's signal is fixed at creation: replace the timer.
    timer_delete(t->timer);
    t->has_timer = false;
    return CreateTimer(t, s, error);
  }
  return true;
}

bool ReadSampleClock(const ThreadRecord* t, uint64_t* ns) {
  if (__atomic_load_n(&t->source, __ATOMIC_ACQUIRE) == kPerfSource) return ReadCount(t->perf_fd, ns);
  return ReadClockNs(t->sample_clock, ns);
}

bool UsesPoissonIntervals(const ThreadRecord* t) {
  return __atomic_load_n(&t->source, __ATOMIC_ACQUIRE) == kPerfSource;
}

uint64_t WeighPoissonSample(const ThreadRecord* t, uint64_t mean_ns, uint64_t now) {
  const uint64_t start = __atomic_load_n(&t->interval_start_ns, __ATOMIC_RELAXED);
  return PoissonSampleWeight(mean_ns, __atomic_load_n(&t->interval_ns, __ATOMIC_RELAXED),
                             now > start ? now - start : 0);
}

void HoldSamplesInHandler(ThreadRecord* t, uint64_t mean_ns) {
  uint64_t hold = kHoldIntervals * mean_ns;
  ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &hold);
}

void ScheduleNextSample(ThreadRecord* t, uint64_t mean_ns) {
  // On failure the event keeps its current interval, and the interval state with it.
  StartInterval(t, DrawInterval(t, mean_ns, /*first=*/false));
}

bool IsOwnSample(const ThreadRecord* t, const siginfo_t* info) {
  if (info == nullptr) return false;
  if (info->si_code == SI_TIMER) return info->si_value.sival_ptr == &kTimerCookie;
  if (info->si_code != POLL_IN && info->si_code != POLL_HUP) return false;
  return t == nullptr || info->si_fd == t->perf_fd;
}

const char* SampleSourceName(const SamplerSettings& s) {
  if (!s.sampled) return "none";
  if (s.clock == ClockKind::kWall) return "timer_create CLOCK_MONOTONIC";
  return s.use_perf ? "perf_event task-clock" : "timer_create CLOCK_THREAD_CPUTIME_ID";
}

}  // namespace cilkprof::agent
