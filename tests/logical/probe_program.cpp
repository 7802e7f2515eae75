// Probe placements for the logical-path tests (tests/logical/check_probe_paths.py).
// Each case calls cilkprof_probe() where a physical profile would lose the logical
// context, and the test asserts the exact logical path of every probe:
//   fresh_fiber   inside a spawned child, which runs on a fresh fiber whose stack
//                 bottoms out in the runtime;
//   continuation  inside the continuation after a spawn, which CILK_FORCE_STEAL=1
//                 makes another worker resume (a stolen continuation);
//   fib           at every leaf of a fib recursion: spawned and called branches mix
//                 at every depth;
//   parallel_for  inside the body of a parallel_for (spawned recursive halving).
// Built with -fno-omit-frame-pointer so both unwinding modes apply. Functions are
// noinline so that every expected frame exists.
#include <cilk/cilk.hpp>
#include <cilkprof/cilkprof.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<long> g_sink{0};

__attribute__((noinline)) void busy(long n) {
  long x = 0;
  for (long i = 0; i < n; ++i) x += i ^ (x >> 3);
  g_sink.fetch_add(x, std::memory_order_relaxed);
}

__attribute__((noinline)) void probe_in_child() {
  CILKPROF_PROBE();
  busy(1000);
}

__attribute__((noinline)) void probe_in_continuation() {
  CILKPROF_PROBE();
  busy(1500);  // not identical to probe_in_child: identical code folding would merge them
}

__attribute__((noinline)) void fresh_fiber(int rounds) {
  for (int r = 0; r < rounds; ++r) {
    cilk::scope scope;
    scope.spawn([] {
      probe_in_child();
      g_sink.fetch_add(1, std::memory_order_relaxed);  // no tail call: the lambda keeps its frame
    });
    busy(100);
    scope.sync();
  }
}

__attribute__((noinline)) void continuation(int rounds) {
  for (int r = 0; r < rounds; ++r) {
    cilk::scope scope;
    scope.spawn([] { busy(2000); });
    probe_in_continuation();
    scope.sync();
  }
}

__attribute__((noinline)) long fib(int n) {
  if (n < 2) {
    CILKPROF_PROBE();
    return n;
  }
  long x = 0;
  cilk::scope scope;
  scope.spawn([&x, n] { x = fib(n - 1); });
  const long y = fib(n - 2);
  scope.sync();
  return x + y;
}

__attribute__((noinline)) void probe_in_body(long i) {
  CILKPROF_PROBE();
  busy(100 + i);
}

__attribute__((noinline)) void parallel_for_bodies(long n) {
  cilk::parallel_for(0, n, 1, [](long i) {
    probe_in_body(i);
    g_sink.fetch_add(1, std::memory_order_relaxed);  // no tail call: the body keeps its frame
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s fresh_fiber|continuation|fib|parallel_for [N]\n", argv[0]);
    return 2;
  }
  const char* which = argv[1];
  const long n = argc > 2 ? std::atol(argv[2]) : 0;
  if (std::strcmp(which, "fresh_fiber") == 0) {
    fresh_fiber(n > 0 ? static_cast<int>(n) : 50);
  } else if (std::strcmp(which, "continuation") == 0) {
    continuation(n > 0 ? static_cast<int>(n) : 50);
  } else if (std::strcmp(which, "fib") == 0) {
    std::printf("fib = %ld\n", cilk::run([n] { return fib(n > 0 ? static_cast<int>(n) : 12); }));
  } else if (std::strcmp(which, "parallel_for") == 0) {
    parallel_for_bodies(n > 0 ? n : 64);
  } else {
    std::fprintf(stderr, "unknown case '%s'\n", which);
    return 2;
  }
  return 0;
}
