// The environment parser: defaults, every variable, and bad values (one message each,
// default kept).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config.h"

namespace cilkprof::agent {
namespace {

Config Parse(const std::map<std::string, std::string>& env, std::vector<std::string>* errors) {
  return ParseConfig(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      errors);
}

TEST(Config, DefaultsWithoutEnvironment) {
  std::vector<std::string> errors;
  const Config c = Parse({}, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(c.socket, "");
  EXPECT_EQ(c.clock, ClockKind::kCpu);
  EXPECT_EQ(c.period_ns, 1000000u);
  EXPECT_EQ(c.unwind, UnwindKind::kDwarf);
  EXPECT_EQ(c.signal, 0);
  EXPECT_TRUE(c.follow_fork);
  EXPECT_EQ(c.flush_ms, 1000u);
  EXPECT_EQ(c.max_nodes, 1u << 20);
  EXPECT_EQ(c.spill_dir, "/tmp");
  EXPECT_FALSE(c.quiet);
  EXPECT_TRUE(c.locks);
  EXPECT_EQ(c.sample_source, SampleSourceChoice::kAuto);
}

TEST(Config, ReadsEveryVariable) {
  std::vector<std::string> errors;
  const Config c = Parse({{"CILKPROF_SOCKET", "tcp:localhost:7000"},
                          {"CILKPROF_CLOCK", "wall"},
                          {"CILKPROF_PERIOD_NS", "250000"},
                          {"CILKPROF_UNWIND", "fp"},
                          {"CILKPROF_SIGNAL", "40"},
                          {"CILKPROF_FOLLOW_FORK", "0"},
                          {"CILKPROF_FLUSH_MS", "20"},
                          {"CILKPROF_MAX_NODES", "4096"},
                          {"CILKPROF_SPILL_DIR", "/var/tmp"},
                          {"TMPDIR", "/ignored"},
                          {"CILKPROF_QUIET", "1"},
                          {"CILKPROF_LOCKS", "0"},
                          {"CILKPROF_SAMPLE_SOURCE", "timer"}},
                         &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(c.socket, "tcp:localhost:7000");
  EXPECT_EQ(c.clock, ClockKind::kWall);
  EXPECT_EQ(c.period_ns, 250000u);
  EXPECT_EQ(c.unwind, UnwindKind::kFramePointer);
  EXPECT_EQ(c.signal, 40);
  EXPECT_FALSE(c.follow_fork);
  EXPECT_EQ(c.flush_ms, 20u);
  EXPECT_EQ(c.max_nodes, 4096u);
  EXPECT_EQ(c.spill_dir, "/var/tmp");
  EXPECT_TRUE(c.quiet);
  EXPECT_FALSE(c.locks);
  EXPECT_EQ(c.sample_source, SampleSourceChoice::kTimer);
}

// CILKPROF_SAMPLE_SOURCE=none: the run that measures work and span without sampling
// (issue 13). Accepted without a message, and each other choice still parses.
TEST(Config, SampleSourceNone) {
  std::vector<std::string> errors;
  EXPECT_EQ(Parse({{"CILKPROF_SAMPLE_SOURCE", "none"}}, &errors).sample_source, SampleSourceChoice::kNone);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(Parse({{"CILKPROF_SAMPLE_SOURCE", "auto"}}, &errors).sample_source, SampleSourceChoice::kAuto);
  EXPECT_EQ(Parse({{"CILKPROF_SAMPLE_SOURCE", "perf"}}, &errors).sample_source, SampleSourceChoice::kPerfEvent);
  EXPECT_TRUE(errors.empty()) << errors.front();
  // The message for a bad value lists it among the choices.
  Parse({{"CILKPROF_SAMPLE_SOURCE", "off"}}, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("auto, perf, timer or none"), std::string::npos) << errors[0];
}

TEST(Config, SpillDirFallsBackToTmpdir) {
  std::vector<std::string> errors;
  EXPECT_EQ(Parse({{"TMPDIR", "/scratch"}}, &errors).spill_dir, "/scratch");
}

struct BadValue {
  const char* name;
  const char* value;
};

class ConfigBadValue : public ::testing::TestWithParam<BadValue> {};

TEST_P(ConfigBadValue, OneMessageNamingTheVariableAndTheDefaultIsKept) {
  std::vector<std::string> errors;
  const Config c = Parse({{GetParam().name, GetParam().value}}, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find(GetParam().name), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("using"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0].find('\n'), std::string::npos);
  const Config defaults = Parse({}, nullptr);
  EXPECT_EQ(c.clock, defaults.clock);
  EXPECT_EQ(c.period_ns, defaults.period_ns);
  EXPECT_EQ(c.unwind, defaults.unwind);
  EXPECT_EQ(c.signal, defaults.signal);
  EXPECT_EQ(c.follow_fork, defaults.follow_fork);
  EXPECT_EQ(c.flush_ms, defaults.flush_ms);
  EXPECT_EQ(c.max_nodes, defaults.max_nodes);
  EXPECT_EQ(c.quiet, defaults.quiet);
  EXPECT_EQ(c.sample_source, defaults.sample_source);
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigBadValue,
    ::testing::Values(BadValue{"CILKPROF_CLOCK", "realtime"}, BadValue{"CILKPROF_PERIOD_NS", "abc"},
                      BadValue{"CILKPROF_PERIOD_NS", "-5"}, BadValue{"CILKPROF_PERIOD_NS", "1000 "},
                      BadValue{"CILKPROF_PERIOD_NS", "5"},
                      BadValue{"CILKPROF_PERIOD_NS", "99999999999999999999999"},
                      BadValue{"CILKPROF_UNWIND", "lbr"}, BadValue{"CILKPROF_SIGNAL", "9"},
                      BadValue{"CILKPROF_SIGNAL", "11"}, BadValue{"CILKPROF_SIGNAL", "0"},
                      BadValue{"CILKPROF_SIGNAL", "200"}, BadValue{"CILKPROF_SIGNAL", "SIGPROF"},
                      BadValue{"CILKPROF_FOLLOW_FORK", "yes"}, BadValue{"CILKPROF_FLUSH_MS", "0"},
                      BadValue{"CILKPROF_MAX_NODES", "10"}, BadValue{"CILKPROF_QUIET", "true"},
                      BadValue{"CILKPROF_SAMPLE_SOURCE", "hpet"}));

}  // namespace
}  // namespace cilkprof::agent
