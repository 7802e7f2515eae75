// fine_grained: a parallel reduction whose tasks are far too small. The sum of
// a hash over [0, n) is computed by binary divide and conquer down to leaves of
// `grain` elements; with the default grain of 1 every element costs a spawn and
// a sync, so runtime overhead dominates the work. A profile shows the time in
// spawn/sync (worker state OVERHEAD) and work efficiency T1/Ts far above 1; rerun
// with a grain of a few thousand to see the same computation coarsened.
#include <cilk/cilk.hpp>

#include <cstdint>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "fine_grained",
    "Sums a hash of every integer in [0, n) by divide and conquer down to leaves of `grain`\n"
    "elements. With grain 1 (default) every element is its own spawned task, so spawn and\n"
    "sync overhead dominates; try grain 4096 for comparison. Verified against a serial loop.",
    {{"n", "number of elements", 100'000'000, 0, 10'000'000'000}, {"grain", "elements per leaf task", 1, 1, 1'000'000'000}}};

// A few nanoseconds of real work per element.
inline std::uint64_t element(long i) { return ex::mix64(static_cast<std::uint64_t>(i)); }

__attribute__((noinline)) std::uint64_t leaf_sum(long lo, long hi) {
  std::uint64_t sum = 0;
  for (long i = lo; i < hi; ++i) sum += element(i);
  return sum;
}

__attribute__((noinline)) std::uint64_t tree_sum(long lo, long hi, long grain) {
  if (hi - lo <= grain) return leaf_sum(lo, hi);
  const long mid = lo + (hi - lo) / 2;
  std::uint64_t left = 0;
  cilk::scope scope;
  scope.spawn([&] { left = tree_sum(lo, mid, grain); });
  const std::uint64_t right = tree_sum(mid, hi, grain);
  scope.sync();
  return left + right;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const long n = static_cast<long>(args[0]);
    const long grain = static_cast<long>(args[1]);
    ex::print_header(kProgram, ex::format("n=%ld grain=%ld", n, grain));

    std::uint64_t sum = 0;
    const double seconds = ex::time_it([&] { sum = cilk::run([&] { return tree_sum(0, n, grain); }); });

    ex::print_result(ex::format("sum of hashes over [0, %ld) = %016llx (%ld leaf tasks)", n,
                                static_cast<unsigned long long>(sum), n == 0 ? 1L : (n + grain - 1) / grain));
    const std::uint64_t expected = leaf_sum(0, n);
    if (sum != expected) {
      ex::verification_failed(kProgram, ex::format("parallel sum %016llx differs from the serial loop's %016llx",
                                                   static_cast<unsigned long long>(sum),
                                                   static_cast<unsigned long long>(expected)));
    }
    ex::print_verified("equals a serial loop");
    ex::print_time(seconds);
  });
}
