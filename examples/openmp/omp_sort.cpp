// omp_sort: a task-parallel mergesort of random 64-bit keys. Each half is sorted by a
// task inside a taskgroup; the halves are merged by a divide-and-conquer merge whose
// two sides are tasks too (as in Cilk's cilksort), so the span is polylogarithmic.
// Ranges below the cutoff are sorted with std::sort: the cutoff sets the grain (a big
// one makes a coarse program with few tasks). Verified: the output is sorted and holds
// the same multiset of keys (an order-independent fingerprint).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "omp_support.hpp"

namespace ex = cilk_examples;
namespace omx = omp_examples;

namespace {

const ex::Program kProgram{
    "omp_sort",
    "Sorts n random 64-bit keys with a task-parallel mergesort: the halves are sorted by\n"
    "tasks in a taskgroup and merged by a parallel divide-and-conquer merge; ranges below\n"
    "the cutoff are sorted serially. Verified: sorted, same keys as the input.",
    {{"n", "number of keys", 4000000, 1, 400000000}, {"cutoff", "range size sorted serially", 2048, 16, 400000000}}};

using Key = std::uint64_t;

// Merges the sorted ranges [a, a_end) and [b, b_end) into out: splits the larger range
// at its middle, finds that key's place in the other by binary search, and merges the
// two lower and the two upper parts as tasks.
__attribute__((noinline)) void merge(const Key* a, const Key* a_end, const Key* b, const Key* b_end, Key* out,
                                     long cutoff) {
  const long na = a_end - a;
  const long nb = b_end - b;
  if (na + nb <= cutoff) {
    std::merge(a, a_end, b, b_end, out);
    return;
  }
  if (na < nb) {
    merge(b, b_end, a, a_end, out, cutoff);
    return;
  }
  const Key* a_mid = a + na / 2;
  const Key* b_mid = std::lower_bound(b, b_end, *a_mid);
  Key* out_mid = out + (a_mid - a) + (b_mid - b);
#pragma omp taskgroup
  {
#pragma omp task
    merge(a, a_mid, b, b_mid, out, cutoff);
    merge(a_mid, a_end, b_mid, b_end, out_mid, cutoff);
  }
}

// Sorts data[0, n) using tmp[0, n) as scratch; the result is in data.
__attribute__((noinline)) void mergesort(Key* data, Key* tmp, long n, long cutoff) {
  if (n <= cutoff) {
    std::sort(data, data + n);
    return;
  }
  const long half = n / 2;
#pragma omp taskgroup
  {
#pragma omp task
    mergesort(data, tmp, half, cutoff);
    mergesort(data + half, tmp + half, n - half, cutoff);
  }
  merge(data, data + half, data + half, data + n, tmp, cutoff);
  // The merged keys go back to data, in parallel pieces of the cutoff's size.
  const auto count = static_cast<std::size_t>(n);
#pragma omp taskloop grainsize(cutoff)
  for (std::size_t i = 0; i < count; ++i) data[i] = tmp[i];
}

Key fingerprint(const std::vector<Key>& keys) {
  Key sum = 0;
  for (const Key k : keys) sum += ex::mix64(k);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = omx::parse_args(kProgram, argc, argv);
    const long n = static_cast<long>(args[0]);
    const long cutoff = static_cast<long>(args[1]);
    omx::print_header(kProgram, ex::format("n=%ld cutoff=%ld", n, cutoff));

    std::vector<Key> keys(static_cast<std::size_t>(n));
    ex::Random random(20240917);
    for (Key& k : keys) k = random.next();
    const Key before = fingerprint(keys);
    std::vector<Key> scratch(keys.size());

    const double seconds = ex::time_it([&] {
#pragma omp parallel
#pragma omp single
      mergesort(keys.data(), scratch.data(), n, cutoff);
    });

    const Key after = fingerprint(keys);
    ex::print_result(ex::format("%ld keys sorted, fingerprint %016llx", n, static_cast<unsigned long long>(after)));
    if (!std::is_sorted(keys.begin(), keys.end())) ex::verification_failed(kProgram, "the output is not sorted");
    if (after != before) {
      ex::verification_failed(kProgram, "the output's keys differ from the input's (fingerprint mismatch)");
    }
    ex::print_verified("sorted, and the same keys as the input by fingerprint");
    ex::print_time(seconds);
  });
}
