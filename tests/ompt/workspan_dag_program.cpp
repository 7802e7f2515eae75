// OpenMP task programs with known dags for the end-to-end work/span test
// (check_ompt_workspan.py; docs/OPENMP.md "Work and span of task graphs"). Under
// CILKPROF_WS_CLOCK=counter time advances only through cilkprof_charge, so the figures
// the profile holds are exact, whatever the schedule, and the checker computes them
// from the same dag.
//
//   workspan_dag_program fib N   one parallel region (2 threads): fib(N) with two task
//                                sites, one unit before each creation, per leaf and
//                                after each taskwait
//   workspan_dag_program group   one region: 5 units, a taskgroup of 4 tasks (10, 20,
//                                30, 40 units, then a grandchild of 7 units they do not
//                                wait for, then 1 unit), then 3 units
//   workspan_dag_program both N  the two regions above in series
// Prints "result: ..." and "ok".
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cilkprof/cilkprof.h"

namespace {

__attribute__((noinline)) long fib(int n) {
  if (n < 2) {
    CILKPROF_CHARGE(1);
    return n;
  }
  long a = 0, b = 0;
  CILKPROF_CHARGE(1);
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  CILKPROF_CHARGE(1);
#pragma omp task shared(b) firstprivate(n)
  b = fib(n - 2);
#pragma omp taskwait
  CILKPROF_CHARGE(1);
  return a + b;
}

__attribute__((noinline)) void grandchild() { CILKPROF_CHARGE(7); }

// Not a task creation in tail position: libomp's codeptr_ra is a return address, and a
// tail-called __kmpc_omp_task would return into child's caller (the site would be
// group's task, not this one).
__attribute__((noinline)) void child(int i) {
  CILKPROF_CHARGE(10 * (i + 1));
#pragma omp task
  grandchild();
  CILKPROF_CHARGE(1);
}

__attribute__((noinline)) void group() {
  CILKPROF_CHARGE(5);
#pragma omp taskgroup
  {
    for (int i = 0; i < 4; ++i) {
#pragma omp task firstprivate(i)
      child(i);
    }
  }
  CILKPROF_CHARGE(3);
}

long RunFib(int n) {
  long r = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  r = fib(n);
  return r;
}

void RunGroup() {
#pragma omp parallel num_threads(2)
#pragma omp single
  group();
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "fib";
  const int n = argc > 2 ? std::atoi(argv[2]) : 12;
  long result = 0;
  if (std::strcmp(what, "fib") == 0 || std::strcmp(what, "both") == 0) result = RunFib(n);
  if (std::strcmp(what, "group") == 0 || std::strcmp(what, "both") == 0) RunGroup();
  std::printf("result: %ld\nok\n", result);
  return 0;
}
