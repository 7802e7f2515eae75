// OpenMP programs for the OMPT tool's robustness and blame tests (tests/ompt,
// check_ompt_run.py). One program, one case per first argument; each prints "ok" and a
// checksum at the end, so a test sees that it ran to completion.
//   fib N               task fib: two tasks and a taskwait per call, in one region;
//                       its work is in task_fib_leaf (the leaves) and task_fib
//   regions N           N parallel regions one after another, each a small loop
//   nested N            N outer regions of 2 threads, each opening inner regions of 2
//   set_num_threads N   N regions, changing omp_set_num_threads between them (1..4)
//   serial_then_tasks N a serial phase (one thread works, the others idle), then N
//                       coarse tasks of unequal length (the others idle at the end):
//                       idleness must land on serial_phase and on coarse_task; every
//                       idle stretch is long against the sampling period
//   fork_child N        fib N, then fork: the child runs serial_phase alone (the
//                       parent's other OpenMP threads do not exist in it: no idleness)
//                       and exits; the parent waits for it
#include <omp.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

volatile long g_sink = 0;

__attribute__((noinline)) long task_fib_leaf(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n * 40; ++i) {  // a little work per leaf, so leaves dominate
    const long c = a + b;
    a = b;
    b = c % 1000003;
  }
  return b & 1;
}

__attribute__((noinline)) long task_fib(int n) {
  if (n < 8) return task_fib_leaf(n);
  long x = 0, y = 0;
#pragma omp task shared(x) firstprivate(n)
  x = task_fib(n - 1);
#pragma omp task shared(y) firstprivate(n)
  y = task_fib(n - 2);
#pragma omp taskwait
  return x + y;
}

long run_fib(int n) {
  long result = 0;
#pragma omp parallel
#pragma omp single
  result = task_fib(n);
  return result;
}

__attribute__((noinline)) long region_body(int i) {
  long s = 0;
  for (int k = 0; k < 2000; ++k) s += (k ^ i) & 7;
  return s;
}

long run_regions(int n) {
  long total = 0;
  for (int r = 0; r < n; ++r) {
#pragma omp parallel reduction(+ : total)
    total += region_body(r + omp_get_thread_num());
  }
  return total;
}

long run_nested(int n) {
  omp_set_max_active_levels(2);
  long total = 0;
  for (int r = 0; r < n; ++r) {
#pragma omp parallel num_threads(2) reduction(+ : total)
    {
      const int outer = omp_get_thread_num();
      long inner_total = 0;
#pragma omp parallel num_threads(2) reduction(+ : inner_total)
      inner_total += region_body(r * 4 + outer * 2 + omp_get_thread_num());
      total += inner_total;
    }
  }
  return total;
}

long run_set_num_threads(int n) {
  long total = 0;
  for (int r = 0; r < n; ++r) {
    omp_set_num_threads(1 + r % 4);
#pragma omp parallel reduction(+ : total)
    total += region_body(r) + omp_get_num_threads();
  }
  return total;
}

__attribute__((noinline)) long serial_phase(long iterations) {
  long s = 0;
  for (long i = 0; i < iterations; ++i) s += (i * 2654435761u) >> 7 & 3;
  return s;
}

// Task i of n does (i + 1) units: the last ones still run when the rest are done.
__attribute__((noinline)) long coarse_task(int i) { return serial_phase(8'000'000L * (i + 1)); }

long run_coarse_tasks(int n) {
  long total = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int i = 0; i < n; ++i) {
#pragma omp task firstprivate(i) shared(total)
      {
        const long r = coarse_task(i);
#pragma omp atomic
        total += r;
      }
    }
#pragma omp taskwait
  }
  return total;
}

// Idleness conservation (check_ompt_run.py --conservation) needs idle stretches that
// are long against the sampling period. Fine-grained tasks do not give that: a thread
// in a taskwait that runs its children one after another is IDLE in the gaps between
// them (libomp's state), often while the other thread is in such a gap too, so that
// idle time is measured and nobody works to be blamed (docs/OPENMP.md).
long run_serial_then_tasks(int n) {
  // One region first: libomp's worker threads exist (and wait) during the serial phase.
  long total = run_fib(8);
  total += serial_phase(200'000'000);
  total += run_coarse_tasks(n);
  return total;
}

long run_fork_child(int n) {
  const long total = run_fib(n);
  const pid_t child = fork();
  if (child == 0) {
    g_sink = serial_phase(100'000'000);
    std::printf("child ok\n");
    std::fflush(stdout);
    std::exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s fib|regions|nested|set_num_threads|serial_then_tasks|fork_child N\n", argv[0]);
    return 2;
  }
  const char* what = argv[1];
  const int n = std::atoi(argv[2]);
  long result = 0;
  if (std::strcmp(what, "fib") == 0) {
    result = run_fib(n);
  } else if (std::strcmp(what, "regions") == 0) {
    result = run_regions(n);
  } else if (std::strcmp(what, "nested") == 0) {
    result = run_nested(n);
  } else if (std::strcmp(what, "set_num_threads") == 0) {
    result = run_set_num_threads(n);
  } else if (std::strcmp(what, "serial_then_tasks") == 0) {
    result = run_serial_then_tasks(n);
  } else if (std::strcmp(what, "fork_child") == 0) {
    result = run_fork_child(n);
    if (result < 0) {
      std::fprintf(stderr, "the fork child failed\n");
      return 1;
    }
  } else {
    std::fprintf(stderr, "unknown case %s\n", what);
    return 2;
  }
  g_sink = result;
  std::printf("ok %ld\n", result);
  return 0;
}
