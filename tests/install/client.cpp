// A user's Cilk program, compiled by the install test against the installed runtime
// with nothing but `pkg-config --cflags --libs cilk` (and again with cilk-profile).
#include <cilk/cilk.hpp>

#include <cstdio>
#include <cstdlib>

namespace {

// Serial (no cilk::scope): a call site of its own only with function hooks.
__attribute__((noinline)) long serial_leaf(int n) { return n; }

long install_client_fib(int n) {
  if (n < 2) return serial_leaf(n);
  long x = 0;
  long y = 0;
  cilk::scope s;
  s.spawn([&] { x = install_client_fib(n - 1); });
  y = install_client_fib(n - 2);
  s.sync();
  return x + y;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20;
  const long result = cilk::run([n] { return install_client_fib(n); });
  // Which agent was preloaded (by cilkprof-run), so the test can tell the installed
  // agent from any other.
  const char* preload = std::getenv("LD_PRELOAD");
  std::printf("fib(%d) = %ld\nLD_PRELOAD=%s\n", n, result, preload ? preload : "");
  return 0;
}
