// Timing helpers shared by the runtime benchmarks: seconds of one call.
#ifndef CILK_BENCH_COMMON_HPP_
#define CILK_BENCH_COMMON_HPP_
#include <time.h>

#include <chrono>
template <class F>
double Seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU seconds of the calling thread during one call: on a shared machine it leaves
// out the time the thread waited for a CPU. Meaningful for work that stays on the
// calling thread (one worker).
template <class F>
double ThreadCpuSeconds(F&& f) {
  auto now = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  const double start = now();
  f();
  return now() - start;
}
#endif
