// lock_contention: a parallel_for whose iterations all update one shared
// histogram under one std::mutex, doing most of their work while holding it.
// With one worker the lock is always free; with more, workers queue on it (and
// sleep in the kernel), so adding workers adds no speed. A profile shows the
// time in the critical section and in waiting for the lock, not in useful
// parallel work. `inside` and `outside` set how much work each iteration does
// with and without the lock held.
#include <cilk/cilk.hpp>

#include <array>
#include <cstdint>
#include <mutex>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "lock_contention",
    "A parallel_for over n items; each item does `outside` rounds of hashing privately,\n"
    "then takes a global std::mutex and does `inside` rounds while updating a shared\n"
    "histogram. Workers serialize on the lock. Verified against a serial computation.",
    {{"n", "number of items", 1'000'000, 0, 10'000'000'000},
     {"inside", "hash rounds per item with the lock held", 100, 0, 1'000'000},
     {"outside", "hash rounds per item without the lock", 20, 0, 1'000'000}}};

constexpr int kBuckets = 64;

struct Histogram {
  std::array<std::uint64_t, kBuckets> counts{};
  std::uint64_t checksum = 0;  // sum of the values: order-independent
};

// `rounds` dependent hash rounds starting from seed.
inline std::uint64_t hash_rounds(std::uint64_t seed, long rounds) {
  for (long r = 0; r < rounds; ++r) seed = ex::mix64(seed);
  return seed;
}

class SharedHistogram {
 public:
  explicit SharedHistogram(long inside) : inside_(inside) {}

  // The critical section: the hashing that decides the bucket happens with the
  // lock held, which is what makes it long.
  __attribute__((noinline)) void add(std::uint64_t value) {
    std::lock_guard<std::mutex> guard(mutex_);
    const std::uint64_t v = hash_rounds(value, inside_);
    ++histogram_.counts[v % kBuckets];
    histogram_.checksum += v;
  }

  const Histogram& histogram() const { return histogram_; }

 private:
  const long inside_;
  std::mutex mutex_;
  Histogram histogram_;
};

__attribute__((noinline)) void fill(SharedHistogram& shared, long n, long outside) {
  cilk::parallel_for(0L, n, [&](long i) { shared.add(hash_rounds(static_cast<std::uint64_t>(i), outside)); });
}

Histogram fill_serially(long n, long inside, long outside) {
  Histogram h;
  for (long i = 0; i < n; ++i) {
    const std::uint64_t v = hash_rounds(hash_rounds(static_cast<std::uint64_t>(i), outside), inside);
    ++h.counts[v % kBuckets];
    h.checksum += v;
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const long n = static_cast<long>(args[0]);
    const long inside = static_cast<long>(args[1]);
    const long outside = static_cast<long>(args[2]);
    ex::print_header(kProgram, ex::format("n=%ld inside=%ld outside=%ld", n, inside, outside));

    SharedHistogram shared(inside);
    const double seconds = ex::time_it([&] { cilk::run([&] { fill(shared, n, outside); }); });

    const Histogram& h = shared.histogram();
    std::uint64_t total = 0;
    for (std::uint64_t c : h.counts) total += c;
    ex::print_result(ex::format("%llu items in %d buckets, checksum %016llx", static_cast<unsigned long long>(total),
                                kBuckets, static_cast<unsigned long long>(h.checksum)));
    const Histogram expected = fill_serially(n, inside, outside);
    if (h.counts != expected.counts || h.checksum != expected.checksum) {
      ex::verification_failed(kProgram, "the shared histogram differs from the serial computation (lost or doubled updates)");
    }
    ex::print_verified("histogram and checksum equal a serial computation");
    ex::print_time(seconds);
  });
}
