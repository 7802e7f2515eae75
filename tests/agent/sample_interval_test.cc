// Poisson sampling intervals and weights (sample_interval.h). Statistical checks use
// a fixed seed and many draws; the bounds are several standard deviations wide.
#include "sample_interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace cilkprof::agent {
namespace {

constexpr uint64_t kMean = 1000000;  // 1 ms, the default period
constexpr int kDraws = 200000;

TEST(SampleInterval, FloorIsFiftyMicrosecondsOrAHundredthOfTheMean) {
  EXPECT_EQ(MinSampleInterval(1000000), 50000u);
  EXPECT_EQ(MinSampleInterval(100000), 50000u);
  EXPECT_EQ(MinSampleInterval(10000000), 100000u);
  EXPECT_EQ(MinSampleInterval(50000), 50000u);  // a period at the floor stays fixed
  EXPECT_EQ(MinSampleInterval(10000), 10000u);
}

TEST(SampleInterval, IntervalsHaveTheConfiguredMeanAndNeverGoBelowTheFloor) {
  uint64_t state = SeedSampleIntervals(1234, 5678);
  double sum = 0, sum_squares = 0;
  uint64_t shortest = UINT64_MAX;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t d = NextSampleInterval(&state, kMean);
    shortest = d < shortest ? d : shortest;
    sum += static_cast<double>(d);
    sum_squares += static_cast<double>(d) * static_cast<double>(d);
  }
  const double mean = sum / kDraws;
  const double sd = std::sqrt(sum_squares / kDraws - mean * mean);
  EXPECT_NEAR(mean, kMean, 0.01 * kMean);  // the standard error is 0.22%
  EXPECT_GE(shortest, MinSampleInterval(kMean));
  EXPECT_LT(shortest, MinSampleInterval(kMean) + 1000);  // the exponential part reaches 0
  // An exponential's standard deviation equals its mean (here minus the floor).
  EXPECT_NEAR(sd, kMean - MinSampleInterval(kMean), 0.02 * kMean);
}

// What makes the sampling unbiased: however long the thread has already run since the
// last sample, the time still to go until the next one is distributed the same.
TEST(SampleInterval, TheTimeToTheNextSampleDoesNotDependOnTheTimeAlreadyWaited) {
  uint64_t state = SeedSampleIntervals(42, 7);
  const double floor = static_cast<double>(MinSampleInterval(kMean));
  for (const double waited : {0.2e6, 0.5e6, 1.0e6, 2.0e6}) {  // all past the floor
    SCOPED_TRACE(waited);
    double remaining = 0;
    int count = 0;
    for (int i = 0; i < kDraws; ++i) {
      const double d = static_cast<double>(NextSampleInterval(&state, kMean));
      if (d > waited) {
        remaining += d - waited;
        ++count;
      }
    }
    ASSERT_GT(count, 1000);
    EXPECT_NEAR(remaining / count, kMean - floor, 0.06 * kMean);
    // And the share of intervals that outlast `waited` is the exponential's.
    EXPECT_NEAR(static_cast<double>(count) / kDraws, std::exp(-(waited - floor) / (kMean - floor)), 0.01);
  }
}

TEST(SampleInterval, PeriodsAtTheFloorStayFixed) {
  uint64_t state = SeedSampleIntervals(1, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(NextSampleInterval(&state, 50000), 50000u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(NextSampleInterval(&state, 10000), 10000u);
}

TEST(SampleInterval, ThreadsStartedTogetherDrawDifferentIntervals) {
  uint64_t a = SeedSampleIntervals(100, 999), b = SeedSampleIntervals(101, 999);
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += NextSampleInterval(&a, kMean) == NextSampleInterval(&b, kMean);
  EXPECT_EQ(same, 0);
}

TEST(SampleInterval, ASampleWeighsTheMeanPlusWhatItsIntervalWasOverrun) {
  // On time, or early (the count read before the interval's start was recorded).
  EXPECT_EQ(PoissonSampleWeight(kMean, 300000, 300000), kMean);
  EXPECT_EQ(PoissonSampleWeight(kMean, 300000, 0), kMean);
  // However short or long the interval was: not the time since the previous sample.
  EXPECT_EQ(PoissonSampleWeight(kMean, 50000, 50000), kMean);
  EXPECT_EQ(PoissonSampleWeight(kMean, 4000000, 4000000), kMean);
  // Delivered 30 us late, or after two overflows the kernel dropped in kernel mode.
  EXPECT_EQ(PoissonSampleWeight(kMean, 300000, 330000), kMean + 30000);
  EXPECT_EQ(PoissonSampleWeight(kMean, 300000, 900000), kMean + 600000);
}

}  // namespace
}  // namespace cilkprof::agent
