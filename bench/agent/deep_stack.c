// The agent overhead benchmark's target: CPU-bound work at the bottom of 30-deep call
// stacks, on THREADS threads (default 1). Two call sites per level make many distinct
// calling contexts, like real recursive code. Prints its own compute time so the
// benchmark can separate the program's slowdown from the profiler's start-up and
// write-out.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 30

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t leaf(uint64_t x, unsigned iterations) {
  for (unsigned i = 0; i < iterations; ++i) x = x * 2862933555777941757ull + 3037000493ull;
  return x;
}

__attribute__((noinline)) static uint64_t level(int depth, uint64_t x, unsigned iterations) {
  if (depth == 0) return leaf(x, iterations);
  // Two distinct call sites: the path to the leaf differs with the low bits of x.
  if (x & (1ull << (depth % 8)))
    return level(depth - 1, x + 1, iterations) ^ 1;
  return level(depth - 1, x + 3, iterations) ^ 2;
}

struct job { unsigned long rounds; uint64_t result; };

static void* worker(void* arg) {
  struct job* job = arg;
  uint64_t x = 88172645463325252ull;
  for (unsigned long r = 0; r < job->rounds; ++r) x = level(DEPTH - 1, x, 2000);
  job->result = x;
  return NULL;
}

int main(int argc, char** argv) {
  unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 400000;
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (rounds == 0 || threads < 1 || threads > 64) {
    fprintf(stderr, "usage: %s [ROUNDS>0] [THREADS 1..64]\n", argv[0]);
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t tids[64];
  struct job jobs[64];
  for (int t = 0; t < threads; ++t) {
    jobs[t].rounds = rounds;
    if (t > 0) pthread_create(&tids[t], NULL, worker, &jobs[t]);
  }
  worker(&jobs[0]);
  for (int t = 1; t < threads; ++t) pthread_join(tids[t], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  for (int t = 0; t < threads; ++t) sink ^= jobs[t].result;
  printf("compute_seconds %.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  return 0;
}
