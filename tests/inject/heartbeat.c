// A target with a heartbeat thread that beats every millisecond and records the
// largest gap between two beats; main blocks reading stdin until end of file, then
// prints "ok" on stdout and the largest gap on stderr (a figure for
// docs/PERFORMANCE.md: the longest stall the injection caused).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile int done;
static int64_t largest_gap_ns;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void* heartbeat(void* arg) {
  (void)arg;
  int64_t last = now_ns();
  while (!done) {
    struct timespec beat = {0, 1000000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &beat, NULL);
    int64_t now = now_ns();
    if (now - last > largest_gap_ns) largest_gap_ns = now - last;
    last = now;
  }
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, heartbeat, NULL);
  printf("ready\n");
  fflush(stdout);
  char buffer[256];
  while (read(0, buffer, sizeof buffer) > 0) {
  }
  done = 1;
  pthread_join(thread, NULL);
  printf("ok\n");
  fprintf(stderr, "largest heartbeat gap: %.3f ms\n", (double)largest_gap_ns / 1e6);
  return 0;
}
