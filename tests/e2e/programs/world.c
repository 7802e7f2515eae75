// The world a program inherits, printed so that a run under cilkprof-run can be
// compared with a plain run, and the waits the signal and job-control tests need.
//
//   world report       the signal dispositions and mask, the file descriptors that a
//                      child would inherit (those without FD_CLOEXEC: the agent's own
//                      descriptors are close-on-exec), the process group and session,
//                      and the environment without the agent's variables
//   world hold FD      prints "ready PID", then reads FD until end of file; exits 0
//   world flushed MODE ARGS...
//                      0.2 s of CPU time, then execs `world MODE ARGS...`: the agent
//                      sends the first image's samples at the exec, so the process has
//                      a profile with samples whatever happens to it afterwards
//   world catch        handles SIGINT, SIGTERM and SIGHUP; prints "ready PID"; waits
//                      for one of them, prints "received SIGNAME from sender PID", exits 3
//   world tty-wait     prints "ready PID", reads one line from standard input, prints
//                      "got LINE", exits 0 (the job-control test types into a terminal)
//   world retitle ARGS...
//                      overwrites its argument strings with '*' first thing (as programs
//                      that mark parsed options or set a process title do), then 0.2 s
//                      of CPU time; prints what /proc/self/cmdline says then
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static const char* Name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? abbrev : "?";
}

static void ReportSignals(void) {
  for (int sig = 1; sig < 32; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0) continue;
    const char* what = "handler";
    if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN) what = "ignored";
    if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL) what = "default";
    printf("disposition SIG%s %s\n", Name(sig), what);
  }
  sigset_t mask;
  sigprocmask(SIG_BLOCK, NULL, &mask);
  for (int sig = 1; sig < SIGRTMIN; ++sig) {
    if (sigismember(&mask, sig)) printf("blocked SIG%s\n", Name(sig));
  }
}

// "pipe:[1234]" -> "pipe": the kind of an inherited descriptor, the same in two runs.
static void ReportFds(void) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) {
    printf("fds unreadable\n");
    return;
  }
  const int own = dirfd(dir);
  int fds[1024];
  int count = 0;
  for (struct dirent* e; (e = readdir(dir)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    const int fd = atoi(e->d_name);
    if (fd != own && count < 1024) fds[count++] = fd;
  }
  closedir(dir);
  for (int i = 0; i < count; ++i) {  // readdir order is not numeric
    for (int j = i + 1; j < count; ++j) {
      if (fds[j] < fds[i]) {
        const int t = fds[i];
        fds[i] = fds[j];
        fds[j] = t;
      }
    }
  }
  for (int i = 0; i < count; ++i) {
    const int flags = fcntl(fds[i], F_GETFD);
    if (flags < 0 || (flags & FD_CLOEXEC)) continue;
    char link[64], target[512];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fds[i]);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    target[n < 0 ? 0 : n] = '\0';
    char* bracket = strchr(target, ':');
    if (bracket && strchr(target, '[')) *bracket = '\0';
    printf("fd %d %s\n", fds[i], target);
  }
}

static int CompareStrings(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

static void ReportEnvironment(void) {
  size_t count = 0;
  while (environ[count]) ++count;
  const char** sorted = calloc(count + 1, sizeof *sorted);
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    const char* e = environ[i];
    // The agent's variables, and the shell's "_" (the path of the command it ran).
    if (strncmp(e, "LD_PRELOAD=", 11) == 0 || strncmp(e, "CILKPROF_", 9) == 0 || strncmp(e, "_=", 2) == 0) {
      continue;
    }
    sorted[kept++] = e;
  }
  qsort(sorted, kept, sizeof *sorted, CompareStrings);
  for (size_t i = 0; i < kept; ++i) printf("env %s\n", sorted[i]);
  free(sorted);
}

static void Report(void) {
  printf("--- world\n");
  ReportSignals();
  ReportFds();
  printf("pgid %d\nsid %d\n", (int)getpgrp(), (int)getsid(0));
  ReportEnvironment();
  printf("--- end\n");
}

static void Ready(void) {
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
}

static volatile sig_atomic_t received_signal;
static volatile sig_atomic_t received_from;

static void OnSignal(int sig, siginfo_t* info, void* context) {
  (void)context;
  received_from = info->si_pid;
  received_signal = sig;
}

static int Catch(void) {
  sigset_t block, old;
  sigemptyset(&block);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = OnSignal;
  sa.sa_flags = SA_SIGINFO;
  for (int sig = 0; sig < 3; ++sig) {
    const int signo = sig == 0 ? SIGINT : sig == 1 ? SIGTERM : SIGHUP;
    sigaction(signo, &sa, NULL);
    sigaddset(&block, signo);
  }
  // Blocked until sigsuspend, so a signal sent right after "ready" is not missed.
  sigprocmask(SIG_BLOCK, &block, &old);
  Ready();
  while (!received_signal) sigsuspend(&old);
  printf("received SIG%s from sender %d\n", Name(received_signal), (int)received_from);
  return 3;
}

static int Hold(int fd) {
  Ready();
  char buffer[256];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n == 0) return 0;
    if (n < 0 && errno != EINTR) return 1;
  }
}

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void Burn(double seconds) {
  const double end = CpuSeconds() + seconds;
  while (CpuSeconds() < end) {
    for (int i = 0; i < 10000; ++i) sink += (unsigned long)i * i;
  }
}

static int TtyWait(void) {
  Ready();
  char line[256];
  if (!fgets(line, sizeof line, stdin)) return 1;
  line[strcspn(line, "\r\n")] = '\0';
  printf("got %s\n", line);
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && strcmp(argv[1], "report") == 0) {
    Report();
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "hold") == 0) return Hold(atoi(argv[2]));
  if (argc >= 3 && strcmp(argv[1], "flushed") == 0) {
    Burn(0.2);
    argv[1] = argv[0];
    execv("/proc/self/exe", argv + 1);
    perror("world: exec");
    return 1;
  }
  if (argc >= 2 && strcmp(argv[1], "catch") == 0) return Catch();
  if (argc >= 2 && strcmp(argv[1], "tty-wait") == 0) return TtyWait();
  if (argc >= 2 && strcmp(argv[1], "retitle") == 0) {
    for (int i = 1; i < argc; ++i) memset(argv[i], '*', strlen(argv[i]));
    Burn(0.2);
    char cmdline[256] = {0};
    const int fd = open("/proc/self/cmdline", O_RDONLY);
    const ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof cmdline - 1) : -1;
    if (fd >= 0) close(fd);
    for (ssize_t i = 0; i < n; ++i) {
      if (cmdline[i] == '\0') cmdline[i] = ' ';
    }
    printf("cmdline %s\n", cmdline);
    return 0;
  }
  fprintf(stderr, "usage: world [flushed] report | hold FD | catch | tty-wait | retitle ARGS...\n");
  return 2;
}
