// cilkprofd's command line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "daemon_options.h"

namespace cilkprof::daemon {
namespace {

// The default socket lives in a directory of its own (issue 12, row 3): never a name
// directly in /tmp that another user could take first.
TEST(DaemonOptionsTest, DefaultsFollowXdgRuntimeDir) {
  ::setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
  EXPECT_EQ(DefaultSocketPath(), "/run/user/1000/cilkprof/cilkprofd.sock");
  ::setenv("XDG_RUNTIME_DIR", "relative/dir", 1);  // the XDG spec says ignore it
  EXPECT_EQ(DefaultSocketPath(), "/tmp/cilkprof-" + std::to_string(::geteuid()) + "/cilkprofd.sock");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(DefaultSocketPath(), "/tmp/cilkprof-" + std::to_string(::geteuid()) + "/cilkprofd.sock");
  const ParsedCommandLine parsed = ParseDaemonOptions({});
  EXPECT_FALSE(parsed.exit_now);
  EXPECT_EQ(parsed.options.socket_path, DefaultSocketPath());
  EXPECT_TRUE(parsed.options.socket_is_default);
  EXPECT_EQ(parsed.options.socket_mode, "600");
  EXPECT_TRUE(parsed.options.tcp_endpoint.empty()) << "TCP is off by default";
  EXPECT_EQ(parsed.options.output_dir, ".");
  EXPECT_EQ(parsed.options.max_frame_bytes, 64u << 20);
  EXPECT_EQ(parsed.options.memory_budget, 256u << 20);
}

TEST(DaemonOptionsTest, ParsesEveryOption) {
  const ParsedCommandLine parsed = ParseDaemonOptions(
      {"--socket", "/tmp/s.sock", "--tcp", "127.0.0.1:7070", "--tcp-secret-file", "/tmp/secret",
       "--output-dir", "/tmp", "--max-frame-bytes", "4096", "--log-level", "debug", "--drain-ms",
       "250", "--socket-mode", "666", "--allow-uid", "1234", "--allow-uid", "root",
       "--memory-budget", "1048576", "--max-connections-per-client", "3",
       "--max-connections-per-uid", "7", "--max-profiles-per-minute", "11",
       "--max-tcp-connections-per-minute", "13"});
  ASSERT_FALSE(parsed.exit_now) << parsed.output;
  EXPECT_EQ(parsed.options.socket_path, "/tmp/s.sock");
  EXPECT_FALSE(parsed.options.socket_is_default);
  EXPECT_EQ(parsed.options.socket_mode, "666");
  EXPECT_EQ(parsed.options.tcp_endpoint, "127.0.0.1:7070");
  EXPECT_EQ(parsed.options.tcp_secret_file, "/tmp/secret");
  EXPECT_EQ(parsed.options.memory_budget, 1048576u);
  EXPECT_EQ(parsed.options.max_connections_per_client, 3u);
  EXPECT_EQ(parsed.options.max_connections_per_uid, 7u);
  EXPECT_EQ(parsed.options.max_profiles_per_minute, 11u);
  EXPECT_EQ(parsed.options.max_tcp_connections_per_minute, 13u);
  const auto uids = AllowedUids(parsed.options);
  ASSERT_TRUE(uids.ok()) << uids.status().message();
  EXPECT_EQ(*uids, (std::vector<uint32_t>{1234, 0}));
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

TEST(DaemonOptionsTest, TcpNeedsASecretAndUsersMustExist) {
  DaemonOptions options;
  options.output_dir = "/tmp";
  options.tcp_endpoint = "127.0.0.1:7070";
  Status status = ValidateDaemonOptions(options);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("--tcp needs --tcp-secret-file"), std::string::npos);
  options.tcp_endpoint.clear();
  options.tcp_secret_file = "/tmp/secret";
  EXPECT_FALSE(ValidateDaemonOptions(options).ok());
  options.tcp_secret_file.clear();
  options.allow_uids = {"no-such-user-cilkprof"};
  status = ValidateDaemonOptions(options);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no such user"), std::string::npos);
  for (const char* mode : {"644", "777", "0600"}) {
    EXPECT_TRUE(ParseDaemonOptions({"--socket-mode", mode}).exit_now) << mode;
  }
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
