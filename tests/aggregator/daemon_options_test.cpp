// cilkprofd's command line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "daemon_options.h"

namespace cilkprof::daemon {
namespace {

TEST(DaemonOptionsTest, DefaultsFollowXdgRuntimeDir) {
  ::setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
  EXPECT_EQ(DefaultSocketPath(), "/run/user/1000/cilkprofd.sock");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(DefaultSocketPath(), "/tmp/cilkprofd-" + std::to_string(::getuid()) + ".sock");
  const ParsedCommandLine parsed = ParseDaemonOptions({});
  EXPECT_FALSE(parsed.exit_now);
  EXPECT_EQ(parsed.options.socket_path, DefaultSocketPath());
  EXPECT_EQ(parsed.options.output_dir, ".");
  EXPECT_EQ(parsed.options.max_frame_bytes, 64u << 20);
}

TEST(DaemonOptionsTest, ParsesEveryOption) {
  const ParsedCommandLine parsed = ParseDaemonOptions(
      {"--socket", "/tmp/s.sock", "--tcp", "127.0.0.1:7070", "--output-dir", "/tmp",
       "--max-frame-bytes", "4096", "--log-level", "debug", "--drain-ms", "250"});
  ASSERT_FALSE(parsed.exit_now) << parsed.output;
  EXPECT_EQ(parsed.options.socket_path, "/tmp/s.sock");
  EXPECT_EQ(parsed.options.tcp_endpoint, "127.0.0.1:7070");
  EXPECT_EQ(parsed.options.output_dir, "/tmp");
  EXPECT_EQ(parsed.options.max_frame_bytes, 4096u);
  EXPECT_EQ(parsed.options.log_level, "debug");
  EXPECT_EQ(parsed.options.drain_ms, 250u);
  EXPECT_TRUE(ValidateDaemonOptions(parsed.options).ok());
}

TEST(DaemonOptionsTest, BadInputIsAUsageError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--bogus"}, {"--log-level", "loud"}, {"--max-frame-bytes", "x"},
        {"--max-frame-bytes", "999999999999"}}) {
    const ParsedCommandLine parsed = ParseDaemonOptions(args);
    EXPECT_TRUE(parsed.exit_now) << args[0];
    EXPECT_NE(parsed.exit_code, 0);
    EXPECT_TRUE(parsed.output_is_error);
    EXPECT_FALSE(parsed.output.empty());
  }
  const ParsedCommandLine help = ParseDaemonOptions({"--help"});
  EXPECT_TRUE(help.exit_now);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--output-dir"), std::string::npos);
}

TEST(DaemonOptionsTest, MissingOutputDirectoryIsReported) {
  DaemonOptions options;
  options.output_dir = "/nonexistent/cilkprof";
  const Status status = ValidateDaemonOptions(options);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace cilkprof::daemon
