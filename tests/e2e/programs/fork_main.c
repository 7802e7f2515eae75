// fork: before_fork runs in the parent only; then the child burns in child_work and
// the parent in parent_work. Each process image must have its own profile, and no
// sample may be counted twice (the child must not inherit before_fork's samples).
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

__attribute__((noinline)) uint64_t before_fork(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 1); }
__attribute__((noinline)) uint64_t child_work(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 2); }
__attribute__((noinline)) uint64_t parent_work(unsigned long n) { return burn_iterations(n * BURN_ITERATIONS_PER_UNIT, 3); }

int main(void) {
  const char* u = getenv("UNITS");
  unsigned long n = u ? strtoul(u, NULL, 10) : 20;
  uint64_t r = before_fork(n);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); return 1; }
  if (pid == 0) {
    r += child_work(n);
    printf("child done %llu\n", (unsigned long long)r & 1);
    return 0;
  }
  r += parent_work(n);
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent done %llu child status %d\n", (unsigned long long)r & 1, WEXITSTATUS(status));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
