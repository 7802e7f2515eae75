// A program with a known calling-context shape, on two threads:
//   main         -> a -> b   burns 3 units in b   (three quarters)
//   main         -> c        burns 1 unit  in c   (one quarter)
//   thread_entry -> a -> b   and  thread_entry -> c, with the same shares.
// The end-to-end test asserts these paths exist exactly as written and that b holds
// about 75% of each thread's samples.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "burn.h"

static unsigned long units(void) {
  const char* u = getenv("UNITS");
  return u ? strtoul(u, NULL, 10) : 40;
}

__attribute__((noinline)) uint64_t b(unsigned long n) { return burn_iterations(3 * n * BURN_ITERATIONS_PER_UNIT, n); }
__attribute__((noinline)) uint64_t a(unsigned long n) { return b(n) + 1; }
__attribute__((noinline)) uint64_t c(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, n); }


__attribute__((noinline)) void* thread_entry(void* arg) {
  uint64_t r = 0;
  unsigned long n = *(unsigned long*)arg;
  for (unsigned long i = 0; i < n; ++i) { r += a(1); r += c(1); }
  return (void*)(uintptr_t)r;
}

int main(void) {
  unsigned long n = units();
  pthread_t t;
  if (pthread_create(&t, NULL, thread_entry, &n) != 0) { perror("pthread_create"); return 1; }
  uint64_t r = 0;
  for (unsigned long i = 0; i < n; ++i) { r += a(1); r += c(1); }
  void* tr;
  pthread_join(t, &tr);
  printf("shape done %llu\n", (unsigned long long)(r + (uintptr_t)tr) & 1);
  return 0;
}
