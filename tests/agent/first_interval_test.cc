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

// Samples a thread that runs `length_ns` gets, as the agent takes them: the event armed
// at ArmedFirstInterval and then at the usual intervals, all trailing the thread's
// schedule by the first one's lag; and, as the thread ends, the sample that is due by
// the schedule but not yet by the event (thread_end_sample.h).
int SamplesOfAThread(uint64_t* state, uint64_t length_ns, uint64_t mean = kMean) {
  int samples = 0;
  const uint64_t due = FirstSampleInterval(state, mean);
  const uint64_t armed = ArmedFirstInterval(due, mean);
  const uint64_t lag = armed - due;
  uint64_t at = armed;
  while (at <= length_ns) {
    ++samples;
    at += NextSampleInterval(state, mean);
  }
  if (at - lag <= length_ns) ++samples;  // taken at the thread's end
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
    // Poisson-like counts: sd about sqrt(expected); 5 of them.
    EXPECT_NEAR(samples, expected, 5 * std::sqrt(expected));
  }
}

// A fixed period at the floor: every first interval below it is armed at the period,
// and the thread-end sample keeps the count.
TEST(FirstSampleInterval, AFixedPeriodKeepsItsShareOfSamples) {
  uint64_t state = SeedSampleIntervals(5, 5);
  const uint64_t period = MinSampleInterval(50000);
  for (const uint64_t length : {20000ull, 75000ull, 130000ull}) {
    SCOPED_TRACE(length);
    double samples = 0;
    for (int i = 0; i < kThreads; ++i) samples += SamplesOfAThread(&state, length, period);
    const double expected = static_cast<double>(kThreads) * length / period;
    EXPECT_NEAR(samples, expected, 0.005 * expected);  // a uniform phase: a tight count
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
  EXPECT_LT(shortest, 1000u);  // due at any instant, the first one included
}

// No interval below the floor is ever armed: one that short, set at a thread's start,
// let the thread run milliseconds to seconds uncounted (sample_interval.cc).
TEST(FirstSampleInterval, IsNeverArmedBelowTheFloor) {
  for (const uint64_t mean : {50000ull, 200000ull, 1000000ull, 10000000ull}) {
    SCOPED_TRACE(mean);
    uint64_t state = SeedSampleIntervals(11, mean);
    const uint64_t floor = MinSampleInterval(mean);
    for (int i = 0; i < 100000; ++i) {
      const uint64_t due = FirstSampleInterval(&state, mean);
      const uint64_t armed = ArmedFirstInterval(due, mean);
      ASSERT_GE(armed, floor);
      ASSERT_EQ(armed, due < floor ? floor : due);  // the lag only ever covers the floor
    }
  }
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
  // Uniform on [0, period].
  EXPECT_NEAR(sum / kThreads, period / 2.0, 0.005 * period);
}

}  // namespace
}  // namespace cilkprof::agent
