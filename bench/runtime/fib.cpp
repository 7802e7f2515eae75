// fib(n) with one spawn per call, no coarsening, in three runtimes chosen at
// compile time: -DUSE_CILK (ours), -DUSE_TBB (oneTBB task_group), -DUSE_OMP
// (OpenMP tasks). Prints "<runtime> fib <n> <seconds>".
#include <cstdio>
#include <cstdlib>

#include "bench_common.hpp"
#if defined(USE_CILK)
#include <cilk/cilk.hpp>
static const char* kName = "cilk";
#elif defined(USE_TBB)
#include <tbb/global_control.h>
#include <tbb/task_group.h>
static const char* kName = "tbb";
#elif defined(USE_OMP)
#include <omp.h>
static const char* kName = "omp";
#endif

__attribute__((noinline)) long fib(int n) {
  if (n < 2) return n;
  long x, y;
#if defined(USE_CILK)
  cilk::scope s;
  s.spawn([&] { x = fib(n - 1); });
  y = fib(n - 2);
  s.sync();
#elif defined(USE_TBB)
  tbb::task_group g;
  g.run([&] { x = fib(n - 1); });
  y = fib(n - 2);
  g.wait();
#elif defined(USE_OMP)
#pragma omp task shared(x) untied
  x = fib(n - 1);
  y = fib(n - 2);
#pragma omp taskwait
#endif
  return x + y;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 30;
  long result = 0;
  double seconds = 0;
#if defined(USE_CILK)
  seconds = Seconds([&] { result = cilk::run([&] { return fib(n); }); });
#elif defined(USE_TBB)
  const char* env = std::getenv("CILK_NWORKERS");
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, env ? std::atoi(env) : 2);
  seconds = Seconds([&] { result = fib(n); });
#elif defined(USE_OMP)
  seconds = Seconds([&] {
#pragma omp parallel
#pragma omp single
    result = fib(n);
  });
#endif
  std::printf("%s fib %d %.4f %ld\n", kName, n, seconds, result);
  return 0;
}
