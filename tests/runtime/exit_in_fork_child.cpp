// A process the program forks after the runtime started calls exit(): the exit
// handlers run in the child, where the pool's worker threads do not exist. They must
// not wait for them (the runtime's shutdown joined them: the child hung for ever).
#include <cilk/cilk.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {
long Fib(int n) {
  if (n < 2) return n;
  long x = 0;
  cilk::scope s;
  s.spawn([&] { x = Fib(n - 1); });
  const long y = Fib(n - 2);
  s.sync();
  return x + y;
}
}  // namespace

int main() {
  if (cilk::run([] { return Fib(20); }) != 6765) return 1;
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) std::exit(5);  // the exit handlers, the runtime's shutdown among them
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 3;
  if (!WIFEXITED(status)) return 4;
  std::printf("the fork child exited with status %d\n", WEXITSTATUS(status));
  return WEXITSTATUS(status) == 5 ? 0 : 6;
}
