// The example service's kernels: the algorithms of examples/fib.cpp, cilksort.cpp and
// nqueens.cpp at request size (see those files for the why of each cut-off).
#include "service/kernels.hpp"

#include <cilk/cilk.hpp>

#include <algorithm>
#include <vector>

namespace cilk_service {
namespace {

using Key = std::int64_t;

__attribute__((noinline)) std::int64_t fib_parallel(int n) {
  if (n < 2) return n;
  std::int64_t x = 0;
  cilk::scope scope;
  scope.spawn([&] { x = fib_parallel(n - 1); });
  const std::int64_t y = fib_parallel(n - 2);
  scope.sync();
  return x + y;
}

constexpr long kSerialSortSize = 2048;
constexpr long kSerialMergeSize = 2048;

__attribute__((noinline)) void merge_serial(const Key* a, const Key* a_end, const Key* b,
                                            const Key* b_end, Key* out) {
  while (a != a_end && b != b_end) *out++ = (*b < *a) ? *b++ : *a++;
  out = std::copy(a, a_end, out);
  std::copy(b, b_end, out);
}

__attribute__((noinline)) void merge_parallel(const Key* a, const Key* a_end, const Key* b,
                                              const Key* b_end, Key* out) {
  if (a_end - a < b_end - b) {
    std::swap(a, b);
    std::swap(a_end, b_end);
  }
  if ((a_end - a) + (b_end - b) <= kSerialMergeSize || b == b_end) {
    merge_serial(a, a_end, b, b_end, out);
    return;
  }
  const Key* a_mid = a + (a_end - a) / 2;
  const Key* b_mid = std::lower_bound(b, b_end, *a_mid);
  Key* out_mid = out + (a_mid - a) + (b_mid - b);
  cilk::scope scope;
  scope.spawn([=] { merge_parallel(a, a_mid, b, b_mid, out); });
  merge_parallel(a_mid, a_end, b_mid, b_end, out_mid);
  scope.sync();
}

// Sorts data[0, n) with tmp[0, n) as scratch (Cilk-5 cilksort: four quarters, two
// pairwise merges, one final merge).
__attribute__((noinline)) void sort_parallel(Key* data, Key* tmp, long n) {
  if (n <= kSerialSortSize) {
    std::sort(data, data + n);
    return;
  }
  const long quarter = n / 4;
  Key* a = data;
  Key* b = a + quarter;
  Key* c = b + quarter;
  Key* d = c + quarter;
  Key* end = data + n;
  Key* tmp_a = tmp;
  Key* tmp_c = tmp + 2 * quarter;
  cilk::scope scope;
  scope.spawn([=] { sort_parallel(a, tmp_a, quarter); });
  scope.spawn([=] { sort_parallel(b, tmp_a + quarter, quarter); });
  scope.spawn([=] { sort_parallel(c, tmp_c, quarter); });
  sort_parallel(d, tmp_c + quarter, end - d);
  scope.sync();
  scope.spawn([=] { merge_parallel(a, b, b, c, tmp_a); });
  merge_parallel(c, d, d, end, tmp_c);
  scope.sync();
  merge_parallel(tmp_a, tmp_c, tmp_c, tmp + n, data);
}

constexpr int kSerialQueenRows = 7;

__attribute__((noinline)) std::int64_t queens_serial(std::uint32_t all, std::uint32_t cols,
                                                     std::uint32_t left, std::uint32_t right) {
  if (cols == all) return 1;
  std::int64_t count = 0;
  std::uint32_t free = all & ~(cols | left | right);
  while (free != 0) {
    const std::uint32_t bit = free & (0u - free);
    free ^= bit;
    count += queens_serial(all, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
  }
  return count;
}

__attribute__((noinline)) std::int64_t queens_parallel(int rows_left, std::uint32_t all,
                                                       std::uint32_t cols, std::uint32_t left,
                                                       std::uint32_t right) {
  if (rows_left <= kSerialQueenRows) return queens_serial(all, cols, left, right);
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
        *slot = queens_parallel(rows_left - 1, all, cols | bit, ((left | bit) << 1) & all,
                                (right | bit) >> 1);
      });
    }
    scope.sync();
  }
  std::int64_t total = 0;
  for (int i = 0; i < children; ++i) total += counts[i];
  return total;
}

std::string compute_fib(long long n) {
  const std::int64_t value = cilk::run([&] { return fib_parallel(static_cast<int>(n)); });
  return cilk_examples::format("ok %lld", static_cast<long long>(value));
}

std::string compute_sort(long long n, long long seed) {
  std::vector<Key> keys = sort_input(n, seed);
  std::vector<Key> tmp(keys.size());
  cilk::run([&] { sort_parallel(keys.data(), tmp.data(), static_cast<long>(n)); });
  // A wrong sort is a bug in the service, not in the request: say so in the reply
  // the load generator checks, rather than answering with plausible numbers.
  if (!std::is_sorted(keys.begin(), keys.end())) return "error internal: sort result is not sorted";
  return cilk_examples::format("ok %lld %lld %lld", static_cast<long long>(keys.front()),
                               static_cast<long long>(keys[n / 2]), static_cast<long long>(keys.back()));
}

std::string compute_nqueens(long long n) {
  const std::uint32_t all = (1u << n) - 1u;
  const std::int64_t count =
      cilk::run([&] { return queens_parallel(static_cast<int>(n), all, 0, 0, 0); });
  return cilk_examples::format("ok %lld", static_cast<long long>(count));
}

}  // namespace

std::string compute(const Request& request) {
  switch (request.kind) {
    case Kind::kFib: return compute_fib(request.n);
    case Kind::kSort: return compute_sort(request.n, request.seed);
    case Kind::kNqueens: return compute_nqueens(request.n);
    case Kind::kPing:
    case Kind::kQuit: break;
  }
  return expected_reply(request);  // ping, quit: fixed replies
}

}  // namespace cilk_service
