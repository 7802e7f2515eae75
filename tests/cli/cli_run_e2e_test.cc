// `cilkprof-run` with the real agent: default names never overwrite, exit status
// passes through. Labelled e2e (drives the preloaded agent).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "run_tool.h"

namespace cilkprof::cli {
namespace {

using testing::ReadFile;
using testing::RunTool;
using testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

TEST(RunWithAgent, DefaultOutputNamesNeverOverwrite) {
  TempDir dir;
  const std::vector<std::string> env = {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT};
  const testing::ToolResult first = RunTool({CILKPROF_TEST_CILKPROF_RUN, CILKPROF_TEST_BUSY_PROGRAM}, dir.path(), env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string stem = "cli_busy_program";
  ASSERT_TRUE(Exists(dir.File(stem + ".cilkprof"))) << first.err;
  EXPECT_NE(first.err.find("Samples"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find(stem + ".cilkprof"), std::string::npos) << first.err;
  const std::string first_bytes = ReadFile(dir.File(stem + ".cilkprof"));

  const testing::ToolResult second =
      RunTool({CILKPROF_TEST_CILKPROF, "run", "-q", "--", CILKPROF_TEST_BUSY_PROGRAM}, dir.path(), env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(second.err.empty()) << second.err;  // -q
  EXPECT_TRUE(Exists(dir.File(stem + ".1.cilkprof")));
  EXPECT_EQ(ReadFile(dir.File(stem + ".cilkprof")), first_bytes);

  const testing::ToolResult view = RunTool({CILKPROF_TEST_CILKPROF, "view", "top-down", dir.File(stem + ".1.cilkprof")});
  EXPECT_EQ(view.exit_code, 0) << view.err;
  EXPECT_NE(view.out.find("burn"), std::string::npos) << view.out;
}

TEST(RunWithAgent, ExitStatusAndSignalsPassThrough) {
  TempDir dir;
  const std::vector<std::string> env = {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT};
  EXPECT_EQ(RunTool({CILKPROF_TEST_CILKPROF_RUN, "-q", "-o", dir.File("a.cilkprof"), "--", "/bin/sh", "-c", "exit 7"},
                    dir.path(), env).exit_code, 7);
  EXPECT_EQ(RunTool({CILKPROF_TEST_CILKPROF_RUN, "-q", "-o", dir.File("b.cilkprof"), "--", "/bin/sh", "-c", "kill -TERM $$"},
                    dir.path(), env).exit_code, 128 + 15);
}

}  // namespace
}  // namespace cilkprof::cli
