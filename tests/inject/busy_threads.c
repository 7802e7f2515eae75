// A target whose threads all compute: 8 threads plus main spin in their own code and
// look every few million iterations for the file named by INJECT_TEST_MARKER (the test
// agent writes it when it starts). When all have seen it they print how many threads
// finished and that each one's running checksum is what pure computation gives.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { kThreads = 8, kCheckEvery = 1 << 22 };
static const char* marker;
static volatile int ready_count;

static void* spin(void* arg) {
  uint64_t* correct = arg;
  __atomic_add_fetch(&ready_count, 1, __ATOMIC_SEQ_CST);
  uint64_t state = 88172645463325252ull, iterations = 0, reference = 88172645463325252ull;
  for (;;) {
    for (int i = 0; i < kCheckEvery; ++i) {  // xorshift: registers only, no calls
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
    }
    iterations += kCheckEvery;
    if (access(marker, F_OK) == 0) break;
  }
  for (uint64_t i = 0; i < iterations; ++i) {  // recompute: an altered register shows
    reference ^= reference << 13;
    reference ^= reference >> 7;
    reference ^= reference << 17;
  }
  *correct = state == reference;
  return NULL;
}

int main(void) {
  marker = getenv("INJECT_TEST_MARKER");
  if (!marker) return 2;
  pthread_t threads[kThreads];
  uint64_t correct[kThreads + 1];
  for (int i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, spin, &correct[i]);
  while (__atomic_load_n(&ready_count, __ATOMIC_SEQ_CST) < kThreads) sched_yield();
  printf("ready\n");
  fflush(stdout);
  spin(&correct[kThreads]);
  int finished = 1, ok = correct[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    ++finished;
    ok += correct[i];
  }
  printf("finished %d\ncorrect %d\n", finished, ok);
  return 0;
}
