// `cilkprof run` on a g++ -fopenmp program with the real agent: one warning without
// --openmp, the program really on libomp with --openmp=libomp. Labelled e2e.
#include <gtest/gtest.h>

#include "run_tool.h"

namespace cilkprof::cli {
namespace {

using testing::RunTool;
using testing::TempDir;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::vector<std::string> kEnv = {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT};

TEST(OpenMpRun, LibgompProgramGetsOneWarning) {
  TempDir dir;
  const testing::ToolResult run =
      RunTool({CILKPROF_TEST_CILKPROF, "run", "-q", "-o", dir.File("p.cilkprof"), "--", CILKPROF_TEST_GOMP_PROGRAM},
              dir.path(), kEnv);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("runtime: libgomp"), std::string::npos) << run.out;
  EXPECT_EQ(Count(run.err, "--openmp=libomp"), 1u) << run.err;
  EXPECT_EQ(Count(run.err, "\n"), 1u) << run.err;

  const testing::ToolResult off = RunTool({CILKPROF_TEST_CILKPROF_RUN, "-q", "--openmp=off", "-o",
                                           dir.File("q.cilkprof"), "--", CILKPROF_TEST_GOMP_PROGRAM},
                                          dir.path(), kEnv);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_TRUE(off.err.empty()) << off.err;
}

TEST(OpenMpRun, LibompReplacesLibgomp) {
  TempDir dir;
  const testing::ToolResult run = RunTool({CILKPROF_TEST_CILKPROF, "run", "-q", "--openmp", "libomp", "-o",
                                           dir.File("p.cilkprof"), "--", CILKPROF_TEST_GOMP_PROGRAM},
                                          dir.path(), kEnv);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("runtime: libomp"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("leaves: 4096"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("libgomp"), std::string::npos) << run.err;
}

TEST(OpenMpRun, MissingLibompStopsBeforeTheProgramRuns) {
  TempDir dir;
  std::vector<std::string> env = kEnv;
  env.push_back("CILKPROF_LIBOMP=" + dir.File("nowhere/libomp.so.5"));
  const testing::ToolResult run = RunTool({CILKPROF_TEST_CILKPROF, "run", "--openmp=libomp", "-o",
                                           dir.File("p.cilkprof"), "--", CILKPROF_TEST_GOMP_PROGRAM},
                                          dir.path(), env);
  EXPECT_EQ(run.exit_code, 125) << run.err;
  EXPECT_NE(run.err.find("CILKPROF_LIBOMP"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("runtime:"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace cilkprof::cli
