// nqueens: counts the placements of n non-attacking queens on an n x n board.
// Like the Cilk-5 benchmark it spawns one child per legal queen position in each
// row and sums the children's counts after the sync; unlike it, the board is a
// triple of bitmasks and the last rows are searched serially (coarsening), so a
// spawn always carries thousands of nodes of work.
#include <cilk/cilk.hpp>

#include <cstdint>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "nqueens",
    "Counts the solutions of the n-queens problem by backtracking, spawning one child per\n"
    "legal placement in the first rows and searching the last rows serially. Verified\n"
    "against the known solution counts (OEIS A000170).",
    {{"n", "board size", 15, 1, 18}}};

// Rows left at which the search stops spawning and finishes serially.
constexpr int kSerialRows = 8;

// Known solution counts for n = 0..18 (OEIS A000170).
constexpr std::int64_t kKnownCounts[] = {1,     1,      0,       0,        2,         10,      4,
                                         40,    92,     352,     724,      2680,      14200,   73712,
                                         365596, 2279184, 14772512, 95815104, 666090624};

// Bitmasks of the columns and the two diagonal directions attacked in this row.
__attribute__((noinline)) std::int64_t count_serial(std::uint32_t all, std::uint32_t cols,
                                                    std::uint32_t left, std::uint32_t right) {
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

__attribute__((noinline)) std::int64_t count_parallel(int rows_left, std::uint32_t all,
                                                      std::uint32_t cols, std::uint32_t left,
                                                      std::uint32_t right) {
  if (rows_left <= kSerialRows) return count_serial(all, cols, left, right);
  std::int64_t counts[32] = {};
  int children = 0;
  {
    cilk::scope scope;
    std::uint32_t free = all & ~(cols | left | right);
    while (free != 0) {
      const std::uint32_t bit = free & (0u - free);
      free ^= bit;
      std::int64_t* slot = &counts[children++];
      scope.spawn([=] {
        *slot = count_parallel(rows_left - 1, all, cols | bit, ((left | bit) << 1) & all,
                               (right | bit) >> 1);
      });
    }
    scope.sync();
  }
  std::int64_t total = 0;
  for (int i = 0; i < children; ++i) total += counts[i];
  return total;
}

std::int64_t nqueens(int n) {
  const std::uint32_t all = (n == 32) ? ~0u : ((1u << n) - 1u);
  return count_parallel(n, all, 0, 0, 0);
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const int n = static_cast<int>(ex::parse_args(kProgram, argc, argv)[0]);
    ex::print_header(kProgram, ex::format("n=%d", n));

    std::int64_t solutions = 0;
    const double seconds = ex::time_it([&] { solutions = cilk::run([&] { return nqueens(n); }); });

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
