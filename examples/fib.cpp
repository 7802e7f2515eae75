// fib: the n-th Fibonacci number by naive binary recursion, one spawn per call
// and no coarsening, exactly like the Cilk-5 benchmark. Almost all of its time is
// spawn and sync, so it measures the runtime's per-spawn cost (T1/Ts) and gives
// the profiler a very deep, very bushy logical call tree.
#include <cilk/cilk.hpp>

#include <cstdint>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "fib",
    "Computes fib(n) by naive binary recursion with a spawn in every call (no coarsening):\n"
    "spawn overhead dominates. Verified against the iterative computation.",
    {{"n", "which Fibonacci number to compute", 39, 0, 60}}};

__attribute__((noinline)) std::int64_t fib(int n) {
  if (n < 2) return n;
  std::int64_t x = 0;
  std::int64_t y = 0;
  cilk::scope scope;
  scope.spawn([&] { x = fib(n - 1); });
  y = fib(n - 2);
  scope.sync();
  return x + y;
}

std::int64_t fib_iterative(int n) {
  std::int64_t a = 0;
  std::int64_t b = 1;
  for (int i = 0; i < n; ++i) {
    const std::int64_t next = a + b;
    a = b;
    b = next;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const int n = static_cast<int>(ex::parse_args(kProgram, argc, argv)[0]);
    ex::print_header(kProgram, ex::format("n=%d", n));

    std::int64_t result = 0;
    const double seconds = ex::time_it([&] { result = cilk::run([&] { return fib(n); }); });

    ex::print_result(ex::format("fib(%d) = %lld", n, static_cast<long long>(result)));
    const std::int64_t expected = fib_iterative(n);
    if (result != expected) {
      ex::verification_failed(kProgram, ex::format("fib(%d) = %lld but the iterative computation gives %lld", n,
                                                   static_cast<long long>(result),
                                                   static_cast<long long>(expected)));
    }
    ex::print_verified("equals the iterative computation");
    ex::print_time(seconds);
  });
}
