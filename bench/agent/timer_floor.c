/* The floor under any 1 kHz sampler on this machine: the cost of the sample source
 * alone, with an empty signal handler (no unwinding, no agent).
 *
 *   bench_timer_floor plain|perf|itimer [iterations]
 *
 *   plain   the loop alone
 *   perf    the agent's default source: a per-thread perf_event task-clock, period
 *           1 ms, the signal sent to this thread (F_SETOWN_EX) -- hrtimer-driven
 *   itimer  gperftools' source: setitimer(ITIMER_PROF, 1 ms), which the kernel checks
 *           at its scheduler tick (CONFIG_HZ), so it delivers at most HZ signals/s
 *
 * Prints the loop's wall time and the signals delivered per second. Compare the
 * modes in alternation (docs/PERFORMANCE.md). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits;

static void on_sample(int signo, siginfo_t* info, void* context) {
  (void)signo;
  (void)info;
  (void)context;
  hits = hits + 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int start_perf_source(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof a;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = 1000000; /* ns */
  a.disabled = 1;
  const int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    perror("perf_event_open");
    return -1;
  }
  struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
  if (fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
      ioctl(fd, PERF_EVENT_IOC_REFRESH, 0) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    perror("arming the perf event");
    return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "plain";
  const long iterations = argc > 2 ? atol(argv[2]) : 400000000L;
  if (strcmp(mode, "perf") == 0 || strcmp(mode, "itimer") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    if (strcmp(mode, "perf") == 0) {
      if (start_perf_source() != 0) return 1;
    } else {
      struct itimerval t = {{0, 1000}, {0, 1000}};
      setitimer(ITIMER_PROF, &t, NULL);
    }
  } else if (strcmp(mode, "plain") != 0) {
    fprintf(stderr, "usage: %s plain|perf|itimer [iterations]\n", argv[0]);
    return 2;
  }
  const double t0 = now();
  volatile uint64_t x = 1;
  for (long i = 0; i < iterations; ++i) x = x * 6364136223846793005ull + 1;
  const double t1 = now();
  printf("%-6s %.4f s  %ld signals (%.0f/s)\n", mode, t1 - t0, (long)hits, (double)hits / (t1 - t0));
  return 0;
}
