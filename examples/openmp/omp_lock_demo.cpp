// omp_lock_demo: lock contention in OpenMP, the two ways programs synchronize. Phase 1:
// every iteration of a parallel loop computes privately, then appends its result to a
// shared table inside `#pragma omp critical` and keeps doing part of its work there
// (the mistake the profile should show: the critical section is far longer than the
// update it protects). Phase 2: tasks update shared buckets guarded by omp_lock_t
// locks (omp_set_lock / omp_unset_lock), a few hot buckets taking most updates.
// Verified: both phases' totals equal the serial computation's.
#include <cstdint>
#include <vector>

#include "common/lcg.hpp"
#include "omp_support.hpp"

namespace ex = cilk_examples;
namespace omx = omp_examples;

namespace {

const ex::Program kProgram{
    "omp_lock_demo",
    "Shows lock contention: a parallel loop whose iterations update a shared table in an\n"
    "`omp critical` section that also does work it need not protect, then tasks that\n"
    "update shared buckets under omp_set_lock locks. Verified against the serial sums.",
    {{"items", "iterations of each phase", 20000, 1, 100000000},
     {"steps", "serial steps of work per item (a quarter inside the lock)", 20000, 1, 100000000}}};

constexpr int kBuckets = 8;

std::uint64_t item_value(long i, long steps) { return ex::lcg_run(static_cast<std::uint64_t>(i), steps); }

// Phase 1: three quarters of the work outside the critical section, a quarter inside.
__attribute__((noinline)) std::uint64_t critical_phase(long items, long steps) {
  std::uint64_t table_sum = 0;
#pragma omp parallel for schedule(dynamic, 16)
  for (long i = 0; i < items; ++i) {
    const std::uint64_t partial = ex::lcg_run(static_cast<std::uint64_t>(i), steps - steps / 4);
#pragma omp critical(shared_table)
    {
      // Needs no protection: only the += does.
      const std::uint64_t value = ex::lcg_run(partial, steps / 4);
      table_sum += value;
    }
  }
  return table_sum;
}

// Phase 2: one task per item, each adding its value to bucket i % kBuckets (bucket 0
// also takes every fourth item's: the hot one), under that bucket's omp lock.
__attribute__((noinline)) std::uint64_t lock_phase(long items, long steps) {
  std::vector<std::uint64_t> buckets(kBuckets, 0);
  omp_lock_t locks[kBuckets];
  for (omp_lock_t& lock : locks) omp_init_lock(&lock);
#pragma omp parallel
#pragma omp single
  for (long i = 0; i < items; ++i) {
#pragma omp task firstprivate(i)
    {
      const std::uint64_t value = item_value(i, steps - steps / 4);
      const int b = (i % 4 == 0) ? 0 : static_cast<int>(i % kBuckets);
      omp_set_lock(&locks[b]);
      buckets[b] += ex::lcg_run(value, steps / 4);
      omp_unset_lock(&locks[b]);
    }
  }
  for (omp_lock_t& lock : locks) omp_destroy_lock(&lock);
  std::uint64_t sum = 0;
  for (const std::uint64_t b : buckets) sum += b;
  return sum;
}

std::uint64_t serial_sum(long items, long steps) {
  std::uint64_t sum = 0;
  for (long i = 0; i < items; ++i) sum += ex::lcg_run(item_value(i, steps - steps / 4), steps / 4);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = omx::parse_args(kProgram, argc, argv);
    const long items = static_cast<long>(args[0]);
    const long steps = static_cast<long>(args[1]);
    omx::print_header(kProgram, ex::format("items=%ld steps=%ld", items, steps));

    std::uint64_t critical_total = 0;
    std::uint64_t lock_total = 0;
    const double seconds = ex::time_it([&] {
      critical_total = critical_phase(items, steps);
      lock_total = lock_phase(items, steps);
    });

    ex::print_result(ex::format("critical sum %016llx, lock sum %016llx",
                                static_cast<unsigned long long>(critical_total),
                                static_cast<unsigned long long>(lock_total)));
    const std::uint64_t expected = serial_sum(items, steps);
    if (critical_total != expected || lock_total != expected) {
      ex::verification_failed(kProgram, ex::format("expected %016llx in both phases",
                                                   static_cast<unsigned long long>(expected)));
    }
    ex::print_verified("both phases equal the serial sum");
    ex::print_time(seconds);
  });
}
