// The program of issue 13, for the call-site tests (callsite_test.cc): a recursive
// Cilk function with work before its scope, a spawned lambda that calls it, a call
// of it from its own scope, and a serial helper around std::sort; main calls it from
// cilk::run. Built twice: as is (scope mode) and with function hooks (cilk::profile,
// full mode). Work is charged in units (CILKPROF_WS_CLOCK=counter), so every call
// site's figures are exact. The test finds the lines by the markers at their ends.
#include <cilk/cilk.hpp>
#include <cilkprof/cilkprof.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

__attribute__((noinline)) void leaf(int units) { cilkprof_charge(static_cast<uint64_t>(units)); }

// Serial: no scope. Its sort is library code (not instrumented, part of its work).
__attribute__((noinline)) void sort_some(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7919) % n;
  std::sort(v.begin(), v.end());
  if (!std::is_sorted(v.begin(), v.end())) std::abort();
  cilkprof_charge(2);
}

__attribute__((noinline)) void h(int n) {
  leaf(1);  // CALL_LEAF
  if (n < 2) return;
  cilk::scope s;
  s.spawn([n] { h(n - 1); });  // SPAWN_H
  h(n - 2);  // CALL_H
  sort_some(8);  // CALL_SORT
  s.sync();
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10;
  cilk::run([n] { h(n); });  // CALL_MAIN
  std::puts("done");
  return 0;
}
