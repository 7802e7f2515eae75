#include "sample_source.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

namespace cilkprof::agent {
namespace {

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

bool ArmThread(ThreadRecord* t, const SamplerSettings& s, std::string* error) {
  if (s.clock == ClockKind::kCpu && s.use_perf) {
    const int fd = OpenTaskClock(t->tid, s.period_ns);
    if (fd >= 0) {
      if (PointPerfAt(fd, t->tid, s.signo, error) &&
          ioctl(fd, PERF_EVENT_IOC_RESET, 0) == 0 && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0) {
        t->perf_fd = fd;
        return true;
      }
      close(fd);
    }
    // Out of descriptors or a per-thread refusal: a timer still samples this thread.
  }
  return CreateTimer(t, s, error);
}

void DisarmThread(ThreadRecord* t) {
  if (t->perf_fd >= 0) {
    ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
    close(t->perf_fd);
    t->perf_fd = -1;
  }
  if (t->has_timer) {
    timer_delete(t->timer);
    t->has_timer = false;
  }
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

const char* SampleSourceName(const SamplerSettings& s) {
  if (s.clock == ClockKind::kWall) return "timer_create CLOCK_MONOTONIC";
  return s.use_perf ? "perf_event task-clock" : "timer_create CLOCK_THREAD_CPUTIME_ID";
}

}  // namespace cilkprof::agent
