// The target of the injection-stall benchmark (bench/attach/run.py, docs/PERFORMANCE.md
// "Attach"): a process started without the agent whose heartbeat thread beats every
// millisecond and keeps the largest gap between two beats. Its main thread blocks in
// read() on stdin, as a service's threads block in their calls, and answers each line:
//   "mark"  prints "gap <largest gap since the previous mark, ms>" and starts afresh,
//           so the benchmark measures the gap over exactly the window it chose
//           (around a `cilkprof attach`, or the same length with no attach at all).
// End of input ends the process. Unlike tests/inject/heartbeat.c (one gap over the
// whole life), the window excludes start-up.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static atomic_int done;
static atomic_int_least64_t largest_gap_ns;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void* heartbeat(void* arg) {
  (void)arg;
  int64_t last = now_ns();
  while (!atomic_load(&done)) {
    struct timespec beat = {0, 1000000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &beat, NULL);
    const int64_t now = now_ns();
    // The reader resets the maximum with an exchange: a compare loop keeps a larger
    // gap that lands between its load and our store.
    int64_t seen = atomic_load(&largest_gap_ns);
    while (now - last > seen && !atomic_compare_exchange_weak(&largest_gap_ns, &seen, now - last)) {
    }
    last = now;
  }
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, heartbeat, NULL);
  printf("ready\n");
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "mark", 4) == 0) {
      printf("gap %.3f\n", (double)atomic_exchange(&largest_gap_ns, 0) / 1e6);
      fflush(stdout);
    }
  }
  atomic_store(&done, 1);
  pthread_join(thread, NULL);
  return 0;
}
