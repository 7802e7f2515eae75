#include "sample_interval.h"

#include <cmath>

namespace cilkprof::agent {
namespace {

// No interval shorter than this is ever armed. The kernel's own floor for a software
// clock event is 10 us, but an interval set that short from the handler
// (PERF_EVENT_IOC_PERIOD) can expire before the handler has returned, and on this
// project's VMs the event then sometimes stopped for milliseconds or seconds: 150 of
// 2,099 such intervals at 10 us, 2 to 4 of ~2,000 at 15 and 20 us, none of ~2,000 each
// at 30, 50, 100 us and 1 ms (bench/shares/short_interval.c). A first interval armed
// below it, at thread start, did the same: of 2,000 threads of 75 us, a handful spent
// 1 ms to seconds of CPU (35 s once) between the first overflow and the handler's first
// system call, time the event never counted nor sampled (ShortThreads e2e test).
constexpr uint64_t kFloorNs = 50000;

// u in (0, 1]: the top 53 bits, never 0, so that a logarithm is finite.
double Uniform(uint64_t* state) { return static_cast<double>((NextRandom(state) >> 11) + 1) * 0x1.0p-53; }

}  // namespace

// xorshift64* (Vigna): fast, no table, good enough for spacing samples.
uint64_t NextRandom(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

uint64_t SeedSampleIntervals(uint64_t tid, uint64_t salt) {
  // splitmix64 of the two, so that threads started together still draw differently.
  uint64_t z = tid * 0x9E3779B97F4A7C15ull + salt;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z != 0 ? z : 0x9E3779B97F4A7C15ull;
}

uint64_t MinSampleInterval(uint64_t mean_ns) {
  const uint64_t floor = mean_ns / 100 > kFloorNs ? mean_ns / 100 : kFloorNs;
  return floor < mean_ns ? floor : mean_ns;
}

uint64_t NextSampleInterval(uint64_t* state, uint64_t mean_ns) {
  const uint64_t floor = MinSampleInterval(mean_ns);
  if (floor >= mean_ns) return mean_ns;  // periods at the floor stay fixed
  const double tail = -std::log(Uniform(state)) * static_cast<double>(mean_ns - floor);
  return floor + static_cast<uint64_t>(tail);
}

uint64_t FirstSampleInterval(uint64_t* state, uint64_t mean_ns) {
  const uint64_t floor = MinSampleInterval(mean_ns);
  const double u = Uniform(state);
  uint64_t interval;
  if (floor >= mean_ns || u * static_cast<double>(mean_ns) <= static_cast<double>(floor)) {
    // The part of the equilibrium density that is flat: uniform below the floor (or
    // below the fixed period). u * mean is uniform over that part's share of [0, mean].
    interval = static_cast<uint64_t>(u * static_cast<double>(mean_ns));
  } else {
    interval = NextSampleInterval(state, mean_ns);  // memoryless beyond the floor
  }
  return interval;
}

uint64_t ArmedFirstInterval(uint64_t due_ns, uint64_t mean_ns) {
  const uint64_t floor = MinSampleInterval(mean_ns);
  return due_ns > floor ? due_ns : floor;
}

uint64_t PoissonSampleWeight(uint64_t mean_ns, uint64_t interval_ns, uint64_t elapsed_ns) {
  return mean_ns + (elapsed_ns > interval_ns ? elapsed_ns - interval_ns : 0);
}

}  // namespace cilkprof::agent
