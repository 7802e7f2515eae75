// A 10,000-deep recursion that burns CPU only at its bottom (issue 12, row 8): every
// sample's stack is far deeper than the agent's frame buffer. Built with frame pointers
// so that both unwind modes walk it.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

#define DEPTH 10000

static uint64_t units(void) {
  const char* text = getenv("UNITS");
  return text != NULL ? strtoull(text, NULL, 10) : 40;
}

__attribute__((noinline)) uint64_t deep_bottom(void) {
  return burn_iterations(units() * BURN_ITERATIONS_PER_UNIT, 7);
}

__attribute__((noinline)) uint64_t deep_level(int n) {
  if (n == 0) return deep_bottom();
  const uint64_t below = deep_level(n - 1);
  __asm__ volatile("" ::: "memory");  // no tail call: every level keeps its frame
  return below + 1;
}

int main(void) {
  printf("%llu\n", (unsigned long long)deep_level(DEPTH));
  return 0;
}
