// omp_nqueens: counts the placements of n non-attacking queens on an n x n board, one
// OpenMP task per legal queen position in the first rows and a serial search of the
// rest. Irregular: subtrees differ by orders of magnitude, so the runtime's load
// balancing does the work. Verified against the known solution counts.
#include <cstdint>

#include "omp_support.hpp"

namespace ex = cilk_examples;
namespace omx = omp_examples;

namespace {

const ex::Program kProgram{
    "omp_nqueens",
    "Counts the solutions of the n-queens problem by backtracking, creating one OpenMP task\n"
    "per legal placement while more than `serial` rows are left and searching the last\n"
    "rows serially. Verified against the known solution counts (OEIS A000170).",
    {{"n", "board size", 13, 1, 18}, {"serial", "rows left at which the search turns serial", 7, 0, 18}}};

constexpr std::int64_t kKnownCounts[] = {1,      1,       0,        0,        2,         10,     4,
                                         40,     92,      352,      724,      2680,      14200,  73712,
                                         365596, 2279184, 14772512, 95815104, 666090624};

// Bitmasks of the attacked columns and of the two diagonal directions in this row.
__attribute__((noinline)) std::int64_t count_serial(std::uint32_t all, std::uint32_t cols, std::uint32_t left,
                                                    std::uint32_t right) {
  if (cols == all) return 1;
  std::int64_t count = 0;
  std::uint32_t free = all & ~(cols | left | right);
  while (free != 0) {
    const std::uint32_t bit = free & (0u - free);
    free ^= bit;
    count += count_serial(all, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
  }
  return count;
}

__attribute__((noinline)) std::int64_t count_tasks(int rows_left, int serial_rows, std::uint32_t all,
                                                   std::uint32_t cols, std::uint32_t left, std::uint32_t right) {
  if (rows_left <= serial_rows) return count_serial(all, cols, left, right);
  std::int64_t counts[32] = {};
  int children = 0;
  std::uint32_t free = all & ~(cols | left | right);
  while (free != 0) {
    const std::uint32_t bit = free & (0u - free);
    free ^= bit;
    std::int64_t* slot = &counts[children++];
#pragma omp task firstprivate(slot, bit)
    *slot = count_tasks(rows_left - 1, serial_rows, all, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
  }
#pragma omp taskwait
  std::int64_t total = 0;
  for (int i = 0; i < children; ++i) total += counts[i];
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = omx::parse_args(kProgram, argc, argv);
    const int n = static_cast<int>(args[0]);
    const int serial_rows = static_cast<int>(args[1]);
    omx::print_header(kProgram, ex::format("n=%d serial=%d", n, serial_rows));

    const std::uint32_t all = (1u << n) - 1u;
    std::int64_t solutions = 0;
    const double seconds = ex::time_it([&] {
#pragma omp parallel
#pragma omp single
      solutions = count_tasks(n, serial_rows, all, 0, 0, 0);
    });

    ex::print_result(ex::format("%lld solutions on a %dx%d board", static_cast<long long>(solutions), n, n));
    if (solutions != kKnownCounts[n]) {
      ex::verification_failed(kProgram, ex::format("counted %lld solutions but the known count for n=%d is %lld",
                                                   static_cast<long long>(solutions), n,
                                                   static_cast<long long>(kKnownCounts[n])));
    }
    ex::print_verified("equals the known count, OEIS A000170");
    ex::print_time(seconds);
  });
}
