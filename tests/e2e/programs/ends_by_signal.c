/* A program that burns CPU in known functions, writes its own CPU time (process CPU
 * clock, ns) to $CPU_FILE every millisecond or so, and ends as asked (issue 12, row 4):
 *   ends_by_signal MODE SECONDS [THREADS]
 * MODE:
 *   segv             dereferences NULL after SECONDS of CPU per thread
 *   fpe              divides by zero after SECONDS
 *   abort-in-malloc  corrupts the heap after SECONDS, so that free() aborts inside
 *                    malloc with its arena lock held
 *   spin             runs until killed (SECONDS is ignored)
 *   handler-returns  spins; a SIGINT handler notes the signal and returns, and the
 *                    program exits 0 after SECONDS more of CPU
 *   handler-reraises spins; a SIGINT handler restores SIG_DFL and raises SIGINT again
 * THREADS extra threads burn CPU alongside the main thread. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

static volatile sig_atomic_t got_sigint = 0;

static void* worker(void* arg) {
  spin_until(*(double*)arg);
  return NULL;
}

static void note_sigint(int signo) {
  (void)signo;
  got_sigint = 1;
}

static void reraise_sigint(int signo) {
  signal(signo, SIG_DFL);
  raise(signo);
}

__attribute__((noinline)) void crash_with_null(void) {
  volatile int* volatile p = NULL;
  *p = 1;
}

__attribute__((noinline)) void crash_with_division(void) {
  /* Both volatile: the compiler turns 1 / x into a comparison, which never traps. */
  volatile int numerator = 1, zero = 0;
  volatile int x = numerator / zero;
  (void)x;
}

__attribute__((noinline)) void crash_in_malloc(void) {
  char* volatile p = malloc(2000);
  char* volatile q = malloc(2000);
  __asm__ volatile("" ::: "memory");
  /* q's chunk header: a size free(p) cannot accept for its neighbour. */
  *(volatile size_t*)(q - sizeof(size_t)) = 1;
  free(p);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "segv";
  const double seconds = argc > 2 ? atof(argv[2]) : 0.5;
  const int threads = argc > 3 ? atoi(argv[3]) : 0;
  open_cpu_record();

  const int forever = strcmp(mode, "spin") == 0 || strcmp(mode, "handler-reraises") == 0 ||
                      strcmp(mode, "handler-returns") == 0;
  double total = forever ? -1 : seconds * (threads + 1);
  if (strcmp(mode, "handler-returns") == 0) signal(SIGINT, note_sigint);
  if (strcmp(mode, "handler-reraises") == 0) signal(SIGINT, reraise_sigint);

  pthread_t workers[16];
  for (int i = 0; i < threads && i < 16; ++i) pthread_create(&workers[i], NULL, worker, &total);
  if (strcmp(mode, "handler-returns") == 0) {
    while (!got_sigint) {
      burn_a_little();
      record_cpu();
    }
    spin_until(cpu_seconds() + seconds);
    printf("the SIGINT handler returned; exiting normally\n");
    return 0;
  }
  spin_until(total);
  record_cpu();
  if (strcmp(mode, "segv") == 0) crash_with_null();
  if (strcmp(mode, "fpe") == 0) crash_with_division();
  if (strcmp(mode, "abort-in-malloc") == 0) crash_in_malloc();
  for (int i = 0; i < threads && i < 16; ++i) pthread_join(workers[i], NULL);
  return 0;
}
