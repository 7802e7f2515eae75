/* A program that dies of a stack overflow, and the alternate signal stacks around it
 * (issue 12, row 4; test_crash.py, StackOverflowTest):
 *   stack_overflow MODE [SECONDS]
 * MODE:
 *   main             burns SECONDS of CPU in spin_until, then recurses without bound on
 *                    the main thread (dies of SIGSEGV)
 *   thread           the same on a second thread, while the main thread waits for it
 *   own-altstack     installs its own alternate stack and a SA_ONSTACK SIGSEGV handler,
 *                    then overflows; the handler prints whether it runs on that stack
 *                    and exits 0 (1 if it does not)
 *   own-altstack-fork  the same in a child forked after installing them (the child's
 *                    thread inherits the stack); exits with the child's status
 *   altstack-use     installs its own alternate stack in shared memory, filled with a
 *                    pattern; a forked child overflows and dies of the default action,
 *                    and the parent prints how many bytes of the stack the death used
 *   fork-overflow    four threads wait while the main thread forks; the child prints
 *                    how many of their alternate stacks are still mapped in it and
 *                    whether its own thread has one, burns SECONDS of CPU and
 *                    overflows; the parent prints the signal the child died of
 *   short-threads N  creates N short threads one after the other and prints the lines
 *                    of /proc/self/maps before and after ("maps before B after A"),
 *                    and whether the first thread had an alternate signal stack
 * $CPU_FILE, if set, receives the process CPU time (ns) as it runs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

#define ALT_BYTES (256 * 1024)
#define PATTERN 0xA5

static char* own_alt = NULL;

/* Unbounded recursion the compiler can neither unroll nor turn into a loop. */
static int (*volatile recurse_next)(int);
__attribute__((noinline)) int recurse_forever(int depth) {
  volatile char frame[256];
  frame[0] = (char)depth;
  return recurse_next(depth + 1) + frame[0];
}

static void overflow(void) {
  recurse_next = recurse_forever;
  recurse_forever(0);
}

static void* overflow_thread(void* arg) {
  spin_until(*(double*)arg);
  record_cpu();
  overflow();
  return NULL;
}

static void install_own_altstack(int shared) {
  own_alt = mmap(NULL, ALT_BYTES, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
                 -1, 0);
  if (own_alt == MAP_FAILED) exit(91);
  memset(own_alt, PATTERN, ALT_BYTES);
  stack_t ss = {.ss_sp = own_alt, .ss_size = ALT_BYTES, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) exit(92);
}

static void say(const char* text) { (void)!write(STDOUT_FILENO, text, strlen(text)); }

static void where_am_i(int signo) {
  (void)signo;
  const char* here = (const char*)__builtin_frame_address(0);
  const int on_own = here >= own_alt && here < own_alt + ALT_BYTES;
  say(on_own ? "the handler ran on the program's alternate stack\n"
             : "the handler ran on another stack\n");
  _exit(on_own ? 0 : 1);
}

static void install_where_am_i(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = where_am_i;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, NULL) != 0) exit(93);
}

static int child_status(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 94;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

static int maps_lines(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  int lines = 0;
  for (int c; (c = fgetc(f)) != EOF;) lines += c == '\n';
  fclose(f);
  return lines;
}

static void* short_work(void* arg) {
  if (arg != NULL) {
    stack_t ss;
    *(int*)arg = sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE) == 0;
  }
  burn_iterations(1000, 3);
  return NULL;
}

#define WAITERS 4
static pthread_barrier_t waiters_ready;
static int release_fds[2];
static void* waiter_altstacks[WAITERS];

static void* wait_for_release(void* arg) {
  stack_t ss;
  if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE) == 0) *(void**)arg = ss.ss_sp;
  pthread_barrier_wait(&waiters_ready);
  char c;
  (void)!read(release_fds[0], &c, 1);
  return NULL;
}

static int fork_overflow(double seconds) {
  pthread_t waiters[WAITERS];
  if (pipe(release_fds) != 0) return 98;
  pthread_barrier_init(&waiters_ready, NULL, WAITERS + 1);
  for (int i = 0; i < WAITERS; ++i) {
    if (pthread_create(&waiters[i], NULL, wait_for_release, &waiter_altstacks[i]) != 0) return 96;
  }
  pthread_barrier_wait(&waiters_ready);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    int recorded = 0, mapped = 0;
    unsigned char resident;
    for (int i = 0; i < WAITERS; ++i) {
      if (waiter_altstacks[i] == NULL) continue;
      ++recorded;
      /* mincore fails with ENOMEM for a range that is not mapped. */
      const uintptr_t page = (uintptr_t)waiter_altstacks[i] & ~(uintptr_t)4095;
      mapped += mincore((void*)page, 4096, &resident) == 0;
    }
    stack_t ss;
    const int own = sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE) == 0;
    printf("child: other threads' alternate stacks mapped %d of %d; its own: %s\n", mapped, recorded,
           own ? "enabled" : "none");
    fflush(stdout);
    spin_until(seconds);
    record_cpu();
    overflow();
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child died of signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  (void)!write(release_fds[1], "xxxx", WAITERS);
  for (int i = 0; i < WAITERS; ++i) pthread_join(waiters[i], NULL);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "main";
  double seconds = argc > 2 ? atof(argv[2]) : 0.3;
  open_cpu_record();
  /* The main thread's stack grows up to this limit: keep the overflow quick. */
  struct rlimit stack;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && (stack.rlim_cur == RLIM_INFINITY || stack.rlim_cur > (8u << 20))) {
    stack.rlim_cur = 8u << 20;
    setrlimit(RLIMIT_STACK, &stack);
  }

  if (strcmp(mode, "main") == 0) {
    spin_until(seconds);
    record_cpu();
    overflow();
  } else if (strcmp(mode, "thread") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, overflow_thread, &seconds) != 0) return 95;
    pthread_join(t, NULL);
  } else if (strcmp(mode, "own-altstack") == 0) {
    install_own_altstack(0);
    install_where_am_i();
    overflow();
  } else if (strcmp(mode, "own-altstack-fork") == 0) {
    install_own_altstack(0);
    install_where_am_i();
    const pid_t pid = fork();
    if (pid == 0) overflow();
    return child_status(pid);
  } else if (strcmp(mode, "altstack-use") == 0) {
    install_own_altstack(1);
    const pid_t pid = fork();
    if (pid == 0) {
      spin_until(cpu_seconds() + seconds);
      overflow();
    }
    const int status = child_status(pid);
    size_t untouched = 0;
    while (untouched < ALT_BYTES && (unsigned char)own_alt[untouched] == PATTERN) ++untouched;
    printf("child status %d altstack bytes used %zu\n", status, (size_t)ALT_BYTES - untouched);
    return 0;
  } else if (strcmp(mode, "fork-overflow") == 0) {
    return fork_overflow(seconds);
  } else if (strcmp(mode, "short-threads") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 2000;
    /* One thread first: what the first thread maps once (its stack cache) is not a leak. */
    pthread_t t;
    int has_altstack = 0;
    if (pthread_create(&t, NULL, short_work, &has_altstack) != 0) return 96;
    pthread_join(t, NULL);
    printf("a thread's alternate stack: %s\n", has_altstack ? "enabled" : "none");
    const int before = maps_lines();
    for (int i = 0; i < n; ++i) {
      if (pthread_create(&t, NULL, short_work, NULL) != 0) return 96;
      pthread_join(t, NULL);
    }
    printf("maps before %d after %d\n", before, maps_lines());
    return 0;
  }
  return 97;
}
