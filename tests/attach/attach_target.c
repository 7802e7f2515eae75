// The target of the attach tests (test_attach.py): a program driven line by line on
// stdin that answers on stdout, so that a profiled run and an unprofiled one can be
// fed the same input and their outputs compared byte for byte.
//
//   work N      N units of hot_a, answers "work N <hash>"
//   work-b N    N units of hot_b, answers "work-b N <hash>"
//   phase a     a second thread starts looping in hot_a; answers "phase a"
//   phase b     that thread moves to hot_b; answers "phase b" once it left hot_a for good
//   phase stop  the thread stops; answers "phase stopped"
//   sigstate    SIGPROF's disposition and mask as this program sees them
//   quit        answers "bye", exit status 0
// The answer to the first command starts with how many bytes the first read() returned
// (the tests send one line at a time, so it is the line's length, profiled or not).
//
// What it does NOT do, on purpose: it installs no SIGPROF handler and blocks no signal,
// so a profiling signal arriving after a detach kills it (default action) and the test
// sees an exit by signal. A counting handler would be more direct but would change the
// agent's behaviour: the agent samples with SIGPROF only when SIGPROF has no handler, and
// would pick a free real-time signal instead (agent/src/signals.cc ChooseInitialSignal).
// A read() interrupted by a signal (EINTR, which the agent's SA_RESTART handler must not
// cause) ends the program with status 3 and a line saying so.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kIterationsPerUnit = 1 << 20 };

__attribute__((noinline)) uint64_t hot_a(uint64_t x, long iterations) {
  for (long i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    x ^= x >> 29;
  }
  return x;
}

__attribute__((noinline)) uint64_t hot_b(uint64_t x, long iterations) {
  for (long i = 0; i < iterations; ++i) {
    x = x * 2862933555777941757ull + 3037000493ull;
    x ^= x >> 31;
  }
  return x;
}

enum Phase { kIdle, kA, kB, kStop };

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static enum Phase g_wanted = kIdle;  // what main asks for
static enum Phase g_running = kIdle; // what the phase thread does now
static volatile uint64_t g_sink;
static pthread_t g_phase_thread;
static int g_phase_thread_started;  // main's own

static enum Phase Wanted(void) {
  pthread_mutex_lock(&g_mu);
  enum Phase p = g_wanted;
  pthread_mutex_unlock(&g_mu);
  return p;
}

static void Running(enum Phase p) {
  pthread_mutex_lock(&g_mu);
  g_running = p;
  pthread_cond_broadcast(&g_cv);
  pthread_mutex_unlock(&g_mu);
}

static void* PhaseThread(void* arg) {
  (void)arg;
  uint64_t x = 1;
  for (;;) {
    const enum Phase p = Wanted();
    if (p != g_running) Running(p);  // acknowledged before the first call of the new phase
    if (p == kStop) break;
    x = p == kA ? hot_a(x, 4096) : hot_b(x, 4096);
  }
  g_sink = x;
  return NULL;
}

// Asks the phase thread (started here if needed, after the request is in place) for `p`
// and waits for its acknowledgement.
static void Ask(enum Phase p) {
  pthread_mutex_lock(&g_mu);
  g_wanted = p;
  pthread_mutex_unlock(&g_mu);
  if (!g_phase_thread_started) g_phase_thread_started = pthread_create(&g_phase_thread, NULL, PhaseThread, NULL) == 0;
  pthread_mutex_lock(&g_mu);
  while (g_running != p) pthread_cond_wait(&g_cv, &g_mu);
  pthread_mutex_unlock(&g_mu);
}

static void SigState(void) {
  struct sigaction sa;
  sigset_t mask;
  sigaction(SIGPROF, NULL, &sa);
  pthread_sigmask(SIG_BLOCK, NULL, &mask);
  printf("sigstate sigprof %s %s\n", sa.sa_handler == SIG_DFL ? "default" : "handled",
         sigismember(&mask, SIGPROF) ? "blocked" : "unblocked");
}

static void Command(const char* line) {
  long n;
  if (sscanf(line, "work %ld", &n) == 1) {
    uint64_t x = (uint64_t)n;
    for (long i = 0; i < n; ++i) x = hot_a(x, kIterationsPerUnit);
    printf("work %ld %016llx\n", n, (unsigned long long)x);
  } else if (sscanf(line, "work-b %ld", &n) == 1) {
    uint64_t x = (uint64_t)n;
    for (long i = 0; i < n; ++i) x = hot_b(x, kIterationsPerUnit);
    printf("work-b %ld %016llx\n", n, (unsigned long long)x);
  } else if (strcmp(line, "phase a") == 0) {
    Ask(kA);
    printf("phase a\n");
  } else if (strcmp(line, "phase b") == 0) {
    Ask(kB);
    printf("phase b\n");
  } else if (strcmp(line, "phase stop") == 0) {
    Ask(kStop);
    pthread_join(g_phase_thread, NULL);
    g_phase_thread_started = 0;
    g_wanted = g_running = kIdle;  // the thread is gone: nobody else reads them
    printf("phase stopped\n");
  } else if (strcmp(line, "sigstate") == 0) {
    SigState();
  } else if (strcmp(line, "quit") == 0) {
    printf("bye\n");
    fflush(stdout);
    exit(0);
  } else {
    printf("unknown command: %s\n", line);
  }
}

int main(void) {
  // A known start whatever the parent left: SIGPROF at its default action, unblocked.
  signal(SIGPROF, SIG_DFL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGPROF);
  pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");

  char buf[4096];
  size_t used = 0;
  int first = 1;
  for (;;) {
    const ssize_t got = read(0, buf + used, sizeof buf - 1 - used);
    if (got < 0) {
      printf("read failed: %s\n", strerror(errno));
      return 3;
    }
    if (got == 0) {
      printf("eof\n");
      return 0;
    }
    if (first) {
      printf("first read %zd bytes\n", got);
      first = 0;
    }
    used += (size_t)got;
    buf[used] = '\0';
    char* start = buf;
    char* end;
    while ((end = strchr(start, '\n')) != NULL) {
      *end = '\0';
      Command(start);
      start = end + 1;
    }
    used = (size_t)(buf + used - start);
    memmove(buf, start, used);
    if (used == sizeof buf - 1) used = 0;  // an endless line: dropped
  }
}
