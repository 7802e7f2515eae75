// cilksort: the Cilk-5 parallel merge sort. The array is cut into four quarters
// sorted by four spawned recursive calls; the quarters are then merged pairwise
// (two spawned merges) and the two halves merged back. Merges are themselves
// parallel: split the larger run at its median, binary-search the split point in
// the other run, and merge the two halves in parallel. Small subproblems fall
// back to a serial sort and a serial merge.
#include <cilk/cilk.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "cilksort",
    "Sorts n pseudo-random 64-bit keys with the Cilk-5 parallel merge sort (four-way\n"
    "recursive split, parallel divide-and-conquer merge). Verified by checking the output\n"
    "is sorted and is a permutation of the input (order-independent fingerprint).",
    {{"n", "number of keys", 20'000'000, 0, 300'000'000}, {"seed", "input seed", 1, 0, 1'000'000'000}}};

using Key = std::int64_t;

constexpr long kSerialSortSize = 2048;   // below this, sort serially
constexpr long kSerialMergeSize = 2048;  // below this total, merge serially

// Merges sorted [a, a_end) and [b, b_end) into out (serially).
__attribute__((noinline)) void merge_serial(const Key* a, const Key* a_end, const Key* b,
                                            const Key* b_end, Key* out) {
  while (a != a_end && b != b_end) *out++ = (*b < *a) ? *b++ : *a++;
  out = std::copy(a, a_end, out);
  std::copy(b, b_end, out);
}

// Parallel merge (Cilk-5 cilkmerge): the larger run is split at its middle
// element, the smaller run at that element's lower bound; both halves are merged
// in parallel into the right places of out.
__attribute__((noinline)) void merge_parallel(const Key* a, const Key* a_end, const Key* b,
                                              const Key* b_end, Key* out) {
  if (a_end - a < b_end - b) {
    std::swap(a, b);
    std::swap(a_end, b_end);
  }
  const long total = (a_end - a) + (b_end - b);
  if (total <= kSerialMergeSize || b == b_end) {
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

// Sorts data[0, n) using tmp[0, n) as scratch; the result ends up in data.
__attribute__((noinline)) void cilksort(Key* data, Key* tmp, long n) {
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
  scope.spawn([=] { cilksort(a, tmp_a, quarter); });
  scope.spawn([=] { cilksort(b, tmp_a + quarter, quarter); });
  scope.spawn([=] { cilksort(c, tmp_c, quarter); });
  cilksort(d, tmp_c + quarter, end - d);
  scope.sync();

  scope.spawn([=] { merge_parallel(a, b, b, c, tmp_a); });
  merge_parallel(c, d, d, end, tmp_c);
  scope.sync();

  merge_parallel(tmp_a, tmp_c, tmp_c, tmp + n, data);
}

// Order-independent fingerprint of a multiset of keys.
std::uint64_t fingerprint(const std::vector<Key>& keys) {
  std::uint64_t sum = 0;
  for (Key k : keys) sum += ex::mix64(static_cast<std::uint64_t>(k));
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const long n = static_cast<long>(args[0]);
    ex::print_header(kProgram, ex::format("n=%ld seed=%lld", n, args[1]));

    std::vector<Key> keys(static_cast<std::size_t>(n));
    ex::Random rng(static_cast<std::uint64_t>(args[1]));
    for (Key& k : keys) k = static_cast<Key>(rng.next());
    const std::uint64_t before = fingerprint(keys);
    std::vector<Key> tmp(keys.size());

    const double seconds =
        ex::time_it([&] { cilk::run([&] { cilksort(keys.data(), tmp.data(), n); }); });

    ex::print_result(ex::format("sorted %ld keys; min %lld, max %lld", n,
                                n > 0 ? static_cast<long long>(keys.front()) : 0LL,
                                n > 0 ? static_cast<long long>(keys.back()) : 0LL));
    const auto unsorted = std::is_sorted_until(keys.begin(), keys.end());
    if (unsorted != keys.end()) {
      ex::verification_failed(kProgram, ex::format("output is not sorted: position %ld holds a smaller key than its predecessor",
                                                   static_cast<long>(unsorted - keys.begin())));
    }
    if (fingerprint(keys) != before) {
      ex::verification_failed(kProgram, "output is not a permutation of the input (fingerprint changed)");
    }
    ex::print_verified("sorted, and a permutation of the input by fingerprint");
    ex::print_time(seconds);
  });
}
