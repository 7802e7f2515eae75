// A thread's first sampling interval (sample_interval.h, issue 12, row 8): drawn from
// the equilibrium distribution of the intervals, so that a thread of any length gets
// its length over the mean period in samples, in expectation, including threads
// shorter than the floor or the period. Fixed seeds and many draws; bounds several
// standard deviations wide.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "sample_interval.h"

namespace cilkprof::agent {
namespace {

constexpr uint64_t kMean = 1000000;  // 1 ms, the default period
constexpr int kThreads = 400000;

// Samples a thread that runs `length_ns` gets: the first interval, then the usual ones.
int SamplesOfAThread(uint64_t* state, uint64_t length_ns) {
  int samples = 0;
  uint64_t at = FirstSampleInterval(state, kMean);
  while (at <= length_ns) {
    ++samples;
    at += NextSampleInterval(state, kMean);
  }
  return samples;
}

TEST(FirstSampleInterval, EveryLengthGetsItsShareOfSamples) {
  uint64_t state = SeedSampleIntervals(99, 1);
  // 20 us (below the floor), 75 us (the threads), 1 ms and 3.3 ms.
  for (const uint64_t length : {20000ull, 75000ull, 1000000ull, 3300000ull}) {
    SCOPED_TRACE(length);
    double samples = 0;
    for (int i = 0; i < kThreads; ++i) samples += SamplesOfAThread(&state, length);
    const double expected = static_cast<double>(kThreads) * length / kMean;
    // Poisson-like counts: sd about sqrt(expected); 5 of them, and the 10 us minimum.
    EXPECT_NEAR(samples, expected, 5 * std::sqrt(expected) + 0.01 * kThreads * 10000.0 / kMean);
  }
}

TEST(FirstSampleInterval, HasTheEquilibriumShape) {
  uint64_t state = SeedSampleIntervals(7, 7);
  const double floor = static_cast<double>(MinSampleInterval(kMean));
  double below_floor = 0, sum = 0;
  uint64_t shortest = UINT64_MAX;
  for (int i = 0; i < kThreads; ++i) {
    const uint64_t d = FirstSampleInterval(&state, kMean);
    shortest = d < shortest ? d : shortest;
    below_floor += d < floor;
    sum += static_cast<double>(d);
  }
  // P(first < floor) = floor / mean; the mean of the residual life E[X^2] / 2E[X], for
  // X = floor + exponential(mean - floor): (floor^2 + 2 floor b + 2 b^2) / (2 mean).
  EXPECT_NEAR(below_floor / kThreads, floor / kMean, 0.003);
  const double b = kMean - floor;
  EXPECT_NEAR(sum / kThreads, (floor * floor + 2 * floor * b + 2 * b * b) / (2 * kMean), 0.01 * kMean);
  EXPECT_GE(shortest, kMinFirstInterval);
  EXPECT_LT(shortest, kMinFirstInterval + 1000);
}

TEST(FirstSampleInterval, AFixedPeriodStartsAtAUniformPhase) {
  uint64_t state = SeedSampleIntervals(3, 4);
  const uint64_t period = MinSampleInterval(50000);  // a period at the floor is fixed
  ASSERT_EQ(period, 50000u);
  double sum = 0;
  for (int i = 0; i < kThreads; ++i) {
    const uint64_t d = FirstSampleInterval(&state, period);
    ASSERT_LE(d, period);
    sum += static_cast<double>(d);
  }
  // Uniform on [0, period], raised to the 10 us minimum: period/2 + min^2 / (2 period).
  const double min = kMinFirstInterval;
  EXPECT_NEAR(sum / kThreads, period / 2.0 + min * min / (2.0 * period), 0.005 * period);
}

}  // namespace
}  // namespace cilkprof::agent
