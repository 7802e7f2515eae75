// The summary: figures, top functions, warnings, and the JSON contract.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cilkprof/views/summary.h"
#include "views_test_profile.h"

namespace cilkprof::views {
namespace {

TEST(Summary, Figures) {
  const ProfileSummary s = Summarize(testing::SmallProfile(), "test.cilkprof", 3);
  EXPECT_EQ(s.samples, 14u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_DOUBLE_EQ(s.duration_s, 0.25);
  EXPECT_DOUBLE_EQ(s.partial_unwind_rate, 2.0 / 14);
  EXPECT_EQ(s.metric, "work");
  ASSERT_EQ(s.top_functions.size(), 3u);
  EXPECT_EQ(s.top_functions[0].name, "b");
  EXPECT_DOUBLE_EQ(s.top_functions[0].exclusive, 5e6);
  EXPECT_EQ(s.top_functions[1].name, "c");
  EXPECT_EQ(s.top_functions[2].name, "helper");
  ASSERT_EQ(s.warnings.size(), 1u);  // 14% partial unwinds
  EXPECT_NE(s.warnings[0].find("partial call path"), std::string::npos);
}

TEST(Summary, Text) {
  const std::string text = RenderSummaryText(Summarize(testing::SmallProfile(), "test.cilkprof", 2));
  EXPECT_EQ(text,
            "Program          /bin/prog (pid 42)\n"
            "Profile          test.cilkprof\n"
            "Duration         250.0 ms\n"
            "Threads          2\n"
            "Samples          14\n"
            "Partial unwinds  14.29% (2)\n"
            "Total samples    14\n"
            "Total work       13.5 ms\n"
            "Top functions by exclusive work:\n"
            "   37.0%  5.0 ms  b\n"
            "   37.0%  5.0 ms  c\n"
            "Warning: 14.3% of samples kept only a partial call path (shown under <partial unwind>); code "
            "without unwind information or frame pointers cuts unwinding short\n");
}

TEST(Summary, JsonContract) {
  const profile::Profile p = testing::SmallProfile();
  const auto json = nlohmann::json::parse(RenderSummaryJson(Summarize(p, "test.cilkprof"), p));
  EXPECT_EQ(json["samples"], 14);
  EXPECT_EQ(json["threads"], 2);
  EXPECT_DOUBLE_EQ(json["duration_s"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(json["partial_unwind_rate"].get<double>(), 2.0 / 14);
  EXPECT_DOUBLE_EQ(json["work"].get<double>(), 13.5e6);  // each metric's total under its name
  EXPECT_DOUBLE_EQ(json["metrics"]["samples"]["total"].get<double>(), 14);
  EXPECT_EQ(json["metrics"]["work"]["unit"], "ns");
  EXPECT_EQ(json["top_functions"][0]["name"], "b");
  EXPECT_EQ(json["warnings"].size(), 1u);
}

TEST(Summary, EmptyProfileWarnsAndDoesNotDivideByZero) {
  profile::Profile empty;
  const ProfileSummary s = Summarize(empty, "empty.cilkprof");
  EXPECT_EQ(s.samples, 0u);
  EXPECT_EQ(s.partial_unwind_rate, 0);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("no samples"), std::string::npos);
  EXPECT_NO_THROW(nlohmann::json::parse(RenderSummaryJson(s, empty)));
  EXPECT_FALSE(RenderSummaryText(s).empty());
}

}  // namespace
}  // namespace cilkprof::views
