// Short sampling intervals set from the signal handler (why sample_interval.cc has a
// 50 us floor, and why the agent holds its event while the handler runs).
//
// One thread computes under a perf_event task-clock counter that signals it, like the
// agent's. At the end of each handler the next interval is set with
// PERF_EVENT_IOC_PERIOD, drawn from a few fixed lengths; with `hold` set, the event is
// first held at 64 ms while the handler runs, as the agent does. For each length:
// how many samples followed it, the longest time (of the thread's CPU, the counter's
// own count) until the next sample, and how many came more than 2 ms late.
//
//   cc -O2 short_interval.c -o short_interval && ./short_interval 1 && ./short_interval 0
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const unsigned long long kLengths[] = {10000, 15000, 20000, 30000, 50000, 100000, 1000000};
enum { kCount = sizeof kLengths / sizeof kLengths[0] };

static int fd, hold;
static unsigned long long start, length, rng = 88172645463325252ull;
static unsigned long long longest[kCount];
static long samples[kCount], late[kCount];

static unsigned long long Count(void) {
  unsigned long long v = 0;
  if (read(fd, &v, sizeof v) != sizeof v) return 0;
  return v;
}

static void Handler(int signo, siginfo_t* info, void* context) {
  (void)signo, (void)info, (void)context;
  const unsigned long long now = Count();
  if (hold) {
    unsigned long long period = 64000000;
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
  }
  if (length != 0) {
    int k = 0;
    while (kLengths[k] != length) ++k;
    const unsigned long long gap = now - start;
    if (gap > longest[k]) longest[k] = gap;
    ++samples[k];
    if (gap > length + 2000000) ++late[k];
  }
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  length = kLengths[rng % kCount];
  start = Count();
  ioctl(fd, PERF_EVENT_IOC_PERIOD, &length);
}

int main(int argc, char** argv) {
  hold = argc > 1 ? atoi(argv[1]) : 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = Handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1000000;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  const pid_t tid = (pid_t)syscall(SYS_gettid);
  fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0);
  if (fd < 0) {
    perror("perf_event_open");
    return 1;
  }
  struct f_owner_ex owner = {F_OWNER_TID, tid};
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC | O_NONBLOCK);
  fcntl(fd, F_SETSIG, SIGPROF);
  fcntl(fd, F_SETOWN_EX, &owner);
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  volatile unsigned long long x = 1;
  for (long i = 0; i < 3000000000L; ++i) x = x * 6364136223846793005ull + 1;
  printf("hold %d\n", hold);
  for (int k = 0; k < kCount; ++k) {
    printf("interval %5llu us: %5ld samples, longest wait %10.1f us, %ld more than 2 ms late\n",
           kLengths[k] / 1000, samples[k], longest[k] / 1e3, late[k]);
  }
  return 0;
}
