// omp_fib: the n-th Fibonacci number by the doubly recursive definition, one OpenMP
// task per recursive call and a taskwait before the sum. The classic fine-grained task
// program: almost all of its time is task creation and scheduling unless a cutoff
// makes calls below it serial. Verified against the iterative computation.
#include <cstdint>

#include "omp_support.hpp"

namespace ex = cilk_examples;
namespace omx = omp_examples;

namespace {

const ex::Program kProgram{
    "omp_fib",
    "Computes fib(n) recursively with one OpenMP task per call and a taskwait before the\n"
    "sum; calls with n below the cutoff run serially (cutoff 0: tasks all the way down,\n"
    "the fine-grained extreme). Verified against the iterative computation.",
    {{"n", "which Fibonacci number", 30, 0, 45}, {"cutoff", "n below which calls are serial", 0, 0, 45}}};

__attribute__((noinline)) std::int64_t fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

__attribute__((noinline)) std::int64_t fib(int n, int cutoff) {
  if (n < 2) return n;
  if (n < cutoff) return fib_serial(n);
  std::int64_t x = 0;
  std::int64_t y = 0;
#pragma omp task shared(x) firstprivate(n, cutoff)
  x = fib(n - 1, cutoff);
#pragma omp task shared(y) firstprivate(n, cutoff)
  y = fib(n - 2, cutoff);
#pragma omp taskwait
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
    const auto args = omx::parse_args(kProgram, argc, argv);
    const int n = static_cast<int>(args[0]);
    const int cutoff = static_cast<int>(args[1]);
    omx::print_header(kProgram, ex::format("n=%d cutoff=%d", n, cutoff));

    std::int64_t result = 0;
    const double seconds = ex::time_it([&] {
#pragma omp parallel
#pragma omp single
      result = fib(n, cutoff);
    });

    ex::print_result(ex::format("fib(%d) = %lld", n, static_cast<long long>(result)));
    const std::int64_t expected = fib_iterative(n);
    if (result != expected) {
      ex::verification_failed(kProgram, ex::format("computed %lld but fib(%d) is %lld", static_cast<long long>(result),
                                                   n, static_cast<long long>(expected)));
    }
    ex::print_verified("equals the iterative computation");
    ex::print_time(seconds);
  });
}
