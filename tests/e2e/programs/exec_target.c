// The program exec_main replaces itself with; exits with status 3 so the test can
// check that cilkprof-run passes the final image's exit status through.
#include <stdio.h>
#include <stdlib.h>
#include "burn.h"

__attribute__((noinline)) uint64_t after_exec(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 5); }

int main(void) {
  const char* u = getenv("UNITS");
  unsigned long n = u ? strtoul(u, NULL, 10) : 20;
  printf("after exec %llu\n", (unsigned long long)after_exec(n) & 1);
  return 3;
}
