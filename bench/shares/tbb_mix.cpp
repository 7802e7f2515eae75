// A oneTBB program for comparing sampled shares with perf's (bench/shares/run.py; issue
// 11, rough edge 8). Each round runs
//   - a tbb::parallel_for over 64 items, each a libm-heavy leaf (sin, exp, log, pow);
//   - a tbb::task_group recursive fib(12) whose leaves are smaller libm-heavy loops;
//   - tbb_heavy: integer and floating-point arithmetic that calls nothing, on the main
//     thread alone while the worker waits for the next round.
// The serial tbb_heavy starts whenever the main thread gets out of the fib's wait, so
// when it starts depends on how the two threads shared the fib, which the profiler's
// interruptions change. It times its own tbb_heavy calls with CLOCK_THREAD_CPUTIME_ID
// and prints, on stderr, "truth tbb_heavy S of T s CPU: P%" (T: the process's CPU time).
//
//   tbb_mix [ROUNDS [HEAVY [THREADS]]]   defaults 2000, 20000 iterations, one per core
//
// Build: g++ -O2 -g -fno-omit-frame-pointer tbb_mix.cpp -o tbb_mix -ltbb
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

std::atomic<double> g_sink{0};

void Publish(double v) {
  double old = g_sink.load(std::memory_order_relaxed);
  while (!g_sink.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

double CpuSeconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

// libm-heavy leaf: every iteration calls four libm functions.
__attribute__((noinline)) double libm_leaf(int seed, int n) {
  double acc = 0;
  for (int i = 0; i < n; ++i) {
    const double x = 0.001 * (seed + i) + 0.5;
    acc += std::sin(x) + std::exp(-x) + std::log(x + 1.0) + std::pow(x, 1.37);
  }
  return acc;
}

// No libm: a xorshift stream mixed into a floating-point recurrence.
__attribute__((noinline)) double tbb_heavy(int seed, int n) {
  unsigned long long s = 0x9E3779B97F4A7C15ull ^ static_cast<unsigned long long>(seed);
  double acc = 0;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    acc = acc * 0.999999 + static_cast<double>(s & 0xFFFF) * 1e-6;
  }
  return acc;
}

__attribute__((noinline)) double tbb_fib(int n) {
  if (n < 2) return libm_leaf(n, 100);
  double a = 0, b = 0;
  tbb::task_group g;
  g.run([&] { a = tbb_fib(n - 1); });
  b = tbb_fib(n - 2);
  g.wait();
  return a + b;
}

__attribute__((noinline)) void range_phase() {
  tbb::parallel_for(tbb::blocked_range<int>(0, 64), [](const tbb::blocked_range<int>& r) {
    double local = 0;
    for (int i = r.begin(); i != r.end(); ++i) local += libm_leaf(i, 500);
    Publish(local);
  });
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int heavy = argc > 2 ? std::atoi(argv[2]) : 20000;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            threads > 0 ? threads
                                        : tbb::global_control::active_value(
                                              tbb::global_control::max_allowed_parallelism));
  double heavy_s = 0;
  for (int r = 0; r < rounds; ++r) {
    range_phase();
    Publish(tbb_fib(12));
    const double before = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    Publish(tbb_heavy(r, heavy));
    heavy_s += CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - before;
  }
  const double total_s = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  std::fprintf(stderr, "truth tbb_heavy %.4f s of %.4f s CPU: %.2f%%\n", heavy_s, total_s,
               100 * heavy_s / total_s);
  std::printf("%g\n", g_sink.load());
  return 0;
}
