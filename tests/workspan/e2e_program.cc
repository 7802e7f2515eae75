// The program the end-to-end work/span tests profile through cilkprof-run:
//   workspan_e2e_program fib N       fib(N) as sp_program.h's FibProgram
//   workspan_e2e_program random SEED a random series-parallel program (with regions)
// With CILKPROF_WS_CLOCK=counter its work and span are exact and equal the
// reference's (sp_program.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sp_program.h"

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "fib") != 0 && std::strcmp(argv[1], "random") != 0)) {
    std::fprintf(stderr, "usage: %s fib N | random SEED\n", argv[0]);
    return 2;
  }
  const long value = std::strtol(argv[2], nullptr, 10);
  const workspan_test::Program program = std::strcmp(argv[1], "fib") == 0
                                             ? workspan_test::FibProgram(static_cast<int>(value))
                                             : workspan_test::RandomProgram(static_cast<uint64_t>(value));
  workspan_test::RunOnRuntime(program);
  std::puts("done");
  return 0;
}
