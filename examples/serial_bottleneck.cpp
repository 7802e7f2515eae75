// serial_bottleneck: the shape of Figure 1-1 of the Cilkprof thesis.
//
//   int main() {
//     cilk_spawn foo();   // lots of work, lots of parallelism
//     bar();              // less work, almost no parallelism
//     cilk_sync;
//     baz();              // a little work, moderate parallelism
//   }
//
// foo counts primes by trial division with a divide-and-conquer spawn tree;
// bar advances two dependent-step chains (one spawned), one three times as long
// as the other, so its parallelism is 4/3; baz advances 64 shorter chains in a
// parallel_for, parallelism 64. foo has the most work, but bar bounds the
// speedup: a profile should rank bar first by parallelism (work / span) even
// though foo dominates the time.
#include <cilk/cilk.hpp>

#include <cstdint>
#include <vector>

#include "common/example_support.hpp"
#include "common/lcg.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "serial_bottleneck",
    "Figure 1-1 of the Cilkprof thesis: main spawns foo (parallel prime counting), calls bar\n"
    "(two serial chains, parallelism 4/3), syncs, then calls baz (64 chains in a parallel_for).\n"
    "foo has the most work; bar limits the speedup. Each part verifies its own result.",
    {{"foo_limit", "foo counts the primes below this", 6'000'000, 2, 1'000'000'000},
     {"bar_steps", "bar's total chain steps", 300'000'000, 4, 100'000'000'000},
     {"baz_steps", "baz's total chain steps (over 64 chains)", 100'000'000, 64, 100'000'000'000}}};

constexpr long kBazChains = 64;
constexpr long kPrimeGrain = 512;  // numbers per leaf of foo's spawn tree

bool is_prime_by_trial_division(long n) {
  if (n < 2) return false;
  if (n % 2 == 0) return n == 2;
  for (long d = 3; d * d <= n; d += 2) {
    if (n % d == 0) return false;
  }
  return true;
}

// Number of primes in [lo, hi).
__attribute__((noinline)) long count_primes(long lo, long hi) {
  if (hi - lo <= kPrimeGrain) {
    long count = 0;
    for (long n = lo; n < hi; ++n) count += is_prime_by_trial_division(n) ? 1 : 0;
    return count;
  }
  const long mid = lo + (hi - lo) / 2;
  long left = 0;
  cilk::scope scope;
  scope.spawn([&] { left = count_primes(lo, mid); });
  const long right = count_primes(mid, hi);
  scope.sync();
  return left + right;
}

// Plenty of work and parallelism.
__attribute__((noinline)) long foo(long limit) { return count_primes(0, limit); }

struct BarResult {
  std::uint64_t long_chain;
  std::uint64_t short_chain;
};

// Mostly serial: a chain of 3/4 of the steps runs alongside one of 1/4.
__attribute__((noinline)) BarResult bar(long steps) {
  const long short_steps = steps / 4;
  BarResult result{};
  cilk::scope scope;
  scope.spawn([&] { result.short_chain = ex::lcg_run(2, short_steps); });
  result.long_chain = ex::lcg_run(1, steps - short_steps);
  scope.sync();
  return result;
}

// Moderate parallelism: kBazChains independent chains.
__attribute__((noinline)) std::vector<std::uint64_t> baz(long steps) {
  std::vector<std::uint64_t> finals(kBazChains);
  cilk::parallel_for(0L, kBazChains, 1L,
                     [&](long c) { finals[c] = ex::lcg_run(100 + c, steps / kBazChains); });
  return finals;
}

long count_primes_by_sieve(long limit) {
  std::vector<bool> composite(static_cast<std::size_t>(limit), false);
  long count = 0;
  for (long n = 2; n < limit; ++n) {
    if (composite[n]) continue;
    ++count;
    for (long m = n * n; m < limit; m += n) composite[m] = true;
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const long foo_limit = static_cast<long>(args[0]);
    const long bar_steps = static_cast<long>(args[1]);
    const long baz_steps = static_cast<long>(args[2]);
    ex::print_header(kProgram, ex::format("foo_limit=%ld bar_steps=%ld baz_steps=%ld", foo_limit, bar_steps, baz_steps));

    long primes = 0;
    BarResult chains{};
    std::vector<std::uint64_t> finals;
    ex::Stopwatch watch;
    {
      cilk::scope scope;  // main's own Cilk frame, as in the figure
      scope.spawn([&] { primes = foo(foo_limit); });
      chains = bar(bar_steps);
      scope.sync();
    }
    const double foo_bar_seconds = watch.seconds();
    finals = baz(baz_steps);
    const double seconds = watch.seconds();

    std::uint64_t baz_digest = 0;
    for (std::uint64_t f : finals) baz_digest ^= f;
    ex::print_result(ex::format("foo: %ld primes below %ld; bar: chains end at %016llx, %016llx; baz: digest %016llx",
                                primes, foo_limit, static_cast<unsigned long long>(chains.long_chain),
                                static_cast<unsigned long long>(chains.short_chain),
                                static_cast<unsigned long long>(baz_digest)));
    const long expected_primes = count_primes_by_sieve(foo_limit);
    if (primes != expected_primes) {
      ex::verification_failed(kProgram, ex::format("foo counted %ld primes below %ld, the sieve counts %ld", primes,
                                                   foo_limit, expected_primes));
    }
    const long short_steps = bar_steps / 4;
    if (chains.long_chain != ex::lcg_jump(1, bar_steps - short_steps) ||
        chains.short_chain != ex::lcg_jump(2, short_steps)) {
      ex::verification_failed(kProgram, "bar's chains do not end where the jump-ahead formula says");
    }
    for (long c = 0; c < kBazChains; ++c) {
      if (finals[c] != ex::lcg_jump(100 + c, baz_steps / kBazChains)) {
        ex::verification_failed(kProgram, ex::format("baz's chain %ld does not end where the jump-ahead formula says", c));
      }
    }
    ex::print_verified("prime count equals a sieve; chain ends equal the LCG jump-ahead formula");
    std::printf("phases: foo+bar %.6f s, baz %.6f s\n", foo_bar_seconds, seconds - foo_bar_seconds);
    ex::print_time(seconds);
  });
}
