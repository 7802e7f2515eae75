// Returns from main while the pool's workers sleep: the process must exit at once
// with main's status (no hang joining them, no crash in static destructors).
#include <cilk/cilk.hpp>

#include <chrono>
#include <cstdio>
#include <thread>

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
  // Idle long enough for every worker to go from spinning to sleeping.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::puts("returning from main while workers sleep");
  return 7;
}
