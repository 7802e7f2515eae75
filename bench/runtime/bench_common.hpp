// Timing helper shared by the runtime benchmarks: seconds of one call.
#ifndef CILK_BENCH_COMMON_HPP_
#define CILK_BENCH_COMMON_HPP_
#include <chrono>
template <class F>
double Seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
#endif
