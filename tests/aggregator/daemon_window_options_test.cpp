// cilkprofd's continuous mode options (issue 15): --window, --keep, window boundaries.
#include <gtest/gtest.h>

#include "daemon_options.h"
#include "window_duration.h"
#include "window_timer.h"

namespace cilkprof::daemon {
namespace {

// Continuous mode (issue 15): --window and --keep.
TEST(DaemonOptionsTest, WindowAndKeep) {
  ParsedCommandLine parsed = ParseDaemonOptions({"--window", "10m", "--keep", "5", "--output-dir", "/tmp"});
  ASSERT_FALSE(parsed.exit_now) << parsed.output;
  EXPECT_EQ(parsed.options.window, std::chrono::seconds(600));
  EXPECT_EQ(parsed.options.keep, 5u);
  EXPECT_TRUE(ValidateDaemonOptions(parsed.options).ok());
  parsed = ParseDaemonOptions({});
  EXPECT_EQ(parsed.options.window.count(), 0) << "off by default: one profile per process";
  EXPECT_EQ(parsed.options.keep, 60u);
  for (const char* bad : {"10", "0s", "0.5s", "25h", "1.25s", "-5s", "5x", "m"}) {
    const ParsedCommandLine refused = ParseDaemonOptions({"--window", bad});
    EXPECT_TRUE(refused.exit_now) << bad;
    EXPECT_NE(refused.output.find("--window"), std::string::npos) << refused.output;
  }
  EXPECT_EQ(*ParseWindowDuration("60s"), std::chrono::seconds(60));
  EXPECT_EQ(*ParseWindowDuration("1.5m"), std::chrono::seconds(90));
  EXPECT_EQ(*ParseWindowDuration("24h"), std::chrono::seconds(86400));
  DaemonOptions keep_alone;
  keep_alone.output_dir = "/tmp";
  keep_alone.keep_given = true;
  const Status status = ValidateDaemonOptions(keep_alone);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("give --window"), std::string::npos);
}

TEST(DaemonOptionsTest, WindowBoundariesAreMultiplesSinceTheEpoch) {
  constexpr uint64_t kS = 1000000000;
  EXPECT_EQ(NextWindowBoundary(1000 * kS + 1, std::chrono::seconds(60)), 1020 * kS);
  EXPECT_EQ(NextWindowBoundary(1020 * kS, std::chrono::seconds(60)), 1080 * kS) << "strictly after";
  EXPECT_EQ(NextWindowBoundary(7199 * kS, std::chrono::hours(1)), 7200 * kS);
}

}  // namespace
}  // namespace cilkprof::daemon
