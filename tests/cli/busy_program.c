/* Burns about 100 ms of CPU time so that the agent takes samples. */
#include <stdio.h>
#include <time.h>
static volatile double sink;
__attribute__((noinline)) static void burn(void) {
  struct timespec start, now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  do {
    for (int i = 0; i < 100000; ++i) sink += i * 0.5;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 100000000L);
}
int main(void) { burn(); return 0; }
