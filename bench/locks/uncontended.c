/* The uncontended lock/unlock pair (issue 14: the agent's lock interposition must add
   at most 5 ns to it). One thread locks and unlocks one pthread mutex ITERATIONS times
   (default 20 million) after a warm-up, and prints the wall time per pair:
     ns_per_pair N.NN
   bench/locks/run.sh runs it with and without the agent and compares medians.
   The process has a second, idle thread all along: under the agent it always has one
   (the flusher), and glibc's lock and unlock skip the bus lock of their atomic
   instructions in a single-threaded process (3.8 against 13-18 ns a pair here), which
   would be measured instead of the agent. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void Pairs(long n) {
  for (long i = 0; i < n; ++i) {
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
  }
}

static int wake[2];

static void* Idle(void* arg) {
  char byte;
  (void)arg;
  return read(wake[0], &byte, 1) == 1 ? NULL : NULL;
}

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 20000000L;
  pthread_t idle;
  if (pipe(wake) != 0 || pthread_create(&idle, NULL, Idle, NULL) != 0) return 1;
  Pairs(iterations / 10); /* warm-up: caches, the real functions resolved */
  const double start = NowNs();
  Pairs(iterations);
  const double elapsed = NowNs() - start;
  printf("ns_per_pair %.2f\n", elapsed / (double)iterations);
  const char byte = 1;
  if (write(wake[1], &byte, 1) != 1) return 1;
  pthread_join(idle, NULL);
  return 0;
}
