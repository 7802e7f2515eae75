// A launcher's shape: a little set-up in the parent (parent_setup), then a forked child
// does the real work (child_work) while the parent waits. Run behind a wrapper script
// that execs env that execs this, the profile holding the samples is the child's.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

__attribute__((noinline)) uint64_t parent_setup(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 1); }
__attribute__((noinline)) uint64_t child_work(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 2); }

int main(void) {
  const char* u = getenv("UNITS");
  unsigned long n = u ? strtoul(u, NULL, 10) : 20;
  uint64_t r = parent_setup(n / 5 + 1);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); return 1; }
  if (pid == 0) {
    r += child_work(n);
    printf("child done %llu\n", (unsigned long long)r & 1);
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent done, child status %d\n", WEXITSTATUS(status));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
