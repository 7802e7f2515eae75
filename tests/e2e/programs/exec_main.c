// exec: burns in before_exec, then replaces itself with the program named in argv[1]
// (exec_target), which burns in after_exec. The two images get separate profiles.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "burn.h"

__attribute__((noinline)) uint64_t before_exec(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 4); }

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s TARGET\n", argv[0]); return 2; }
  const char* u = getenv("UNITS");
  unsigned long n = u ? strtoul(u, NULL, 10) : 20;
  uint64_t r = before_exec(n);
  printf("before exec %llu\n", (unsigned long long)r & 1);
  fflush(stdout);
  execv(argv[1], &argv[1]);
  perror("execv");
  return 1;
}
