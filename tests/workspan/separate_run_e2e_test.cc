// `cilkprof run --workspan=separate` (the default; cli/src/separate_workspan_run.h), end
// to end through cilkprof-run with the real agent, runtime and views: the program runs
// sampled without instrumentation, then again instrumented and unsampled, and the
// second run's work and span are joined into the first run's profile. Which runs
// happened is seen through the program's side effects (a line appended to a file per
// run) and through the profile (WorkSpan.separate_run_pid, the `instrumentation`
// metric), never through timing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "run_tool.h"

using cilkprof::cli::testing::ReadFile;
using cilkprof::cli::testing::RunTool;
using cilkprof::cli::testing::TempDir;
using cilkprof::cli::testing::ToolResult;
using cilkprof::cli::testing::WriteFile;
using Json = nlohmann::json;

namespace {

const std::vector<std::string> kEnv = {"CILK_NWORKERS=2", std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT};

// fib(n) spawns fib(n+1) - 1 times.
uint64_t FibSpawns(int n) {
  uint64_t a = 0, b = 1;
  for (int i = 0; i < n + 1; ++i) {
    const uint64_t next = a + b;
    a = b;
    b = next;
  }
  return a - 1;
}

// Runs `script` with /bin/sh, which runs cilkprof-run (as $RUN) and names the example
// $FIB; the script's own stdin is /dev/null unless it redirects it.
ToolResult Shell(const std::string& script) {
  return RunTool({"/bin/sh", "-c",
                  "RUN='" + std::string(CILKPROF_TEST_CILKPROF_RUN) + "'; FIB='" + CILKPROF_TEST_FIB + "'; " + script},
                 "", kEnv);
}

Json Summary(const std::string& profile) {
  const ToolResult summary = RunTool({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  return Json::parse(summary.out, nullptr, /*allow_exceptions=*/false);
}

// The spawn rows' invocation count in `view callsites` (0 without work/span data).
uint64_t SpawnCount(const std::string& profile) {
  const ToolResult sites = RunTool({CILKPROF_TEST_CILKPROF, "view", "callsites", "--format", "json", profile});
  const Json rows = Json::parse(sites.out, nullptr, /*allow_exceptions=*/false);
  if (sites.exit_code != 0 || !rows.is_array()) return 0;
  uint64_t count = 0;
  for (const Json& row : rows) {
    if (row.value("kind", "") == "spawn") count += row.value("count", uint64_t{0});
  }
  return count;
}

size_t Lines(const std::string& path) {
  const std::string text = ReadFile(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(SeparateRunE2E, DefaultRunsTheProgramTwiceAndJoinsWorkAndSpan) {
  TempDir dir;
  const std::string profile = dir.File("fib.cilkprof");
  // fib 27 at a 100 us period: tens of samples (fib 24 at 1 ms sometimes took none).
  const ToolResult run = Shell("\"$RUN\" --period 100us -o '" + profile + "' -- /bin/sh -c 'echo run >> " +
                               dir.File("runs") + "; exec \"$0\" 27' \"$FIB\"");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Lines(dir.File("runs")), 2u) << "the program runs twice: sampled, then instrumented";
  // The second run's output is not shown: the program's output appears once.
  EXPECT_EQ(run.out.find("fib: n=27"), run.out.rfind("fib: n=27")) << run.out;
  EXPECT_NE(run.out.find("fib: n=27"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("Work and span (a second, instrumented run: pid "), std::string::npos) << run.err;

  const Json summary = Summary(profile);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary.value("workspan_run", ""), "separate");
  EXPECT_GT(summary.value("samples", 0.0), 0);
  // The sampled run ran no tool code.
  EXPECT_EQ(summary["metrics"]["instrumentation"].value("total", 0.0), 0.0);
  EXPECT_EQ(SpawnCount(profile), FibSpawns(27));
}

TEST(SeparateRunE2E, SameRunsOnceWithTheToolBesideTheSampler) {
  TempDir dir;
  const std::string profile = dir.File("fib.cilkprof");
  const ToolResult run = Shell("\"$RUN\" -q --workspan=same --period 100us -o '" + profile +
                               "' -- /bin/sh -c 'echo run >> " + dir.File("runs") + "; exec \"$0\" 27' \"$FIB\"");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Lines(dir.File("runs")), 1u);
  const Json summary = Summary(profile);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary.value("workspan_run", ""), "same");
  EXPECT_GT(summary["metrics"]["instrumentation"].value("total", 0.0), 0.0);
  EXPECT_EQ(SpawnCount(profile), FibSpawns(27));
}

TEST(SeparateRunE2E, ARegularFileOnStandardInputIsReadAgainFromItsStart) {
  TempDir dir;
  WriteFile(dir.File("n"), "22\n");
  const std::string profile = dir.File("fib.cilkprof");
  // Without the file read again, the second run reads nothing and runs fib(20).
  const ToolResult run = Shell("\"$RUN\" -q -o '" + profile +
                               "' -- /bin/sh -c 'read n; exec \"$0\" ${n:-20}' \"$FIB\" < " + dir.File("n"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Summary(profile).value("workspan_run", ""), "separate");
  EXPECT_EQ(SpawnCount(profile), FibSpawns(22));
}

TEST(SeparateRunE2E, APipeOnStandardInputMeasuresInTheSampledRun) {
  TempDir dir;
  const std::string profile = dir.File("fib.cilkprof");
  const ToolResult run = Shell("echo 22 | \"$RUN\" -o '" + profile + "' -- /bin/sh -c 'echo run >> " +
                               dir.File("runs") + "; read n; exec \"$0\" ${n:-20}' \"$FIB\"");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Lines(dir.File("runs")), 1u);
  EXPECT_NE(run.err.find("Work and span    measured in the sampled run, not in a second one (standard input is a "
                         "pipe"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(Summary(profile).value("workspan_run", ""), "same");
  EXPECT_EQ(SpawnCount(profile), FibSpawns(22));

  // Asked for explicitly, it is refused before the program starts.
  const ToolResult refused = Shell("echo 22 | \"$RUN\" --workspan=separate -o '" + dir.File("refused.cilkprof") +
                                   "' -- /bin/sh -c 'echo run >> " + dir.File("runs") + "'");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("standard input is a pipe, which a second run of the program could not read again"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--workspan=same"), std::string::npos) << refused.err;
  EXPECT_EQ(Lines(dir.File("runs")), 1u);
}

TEST(SeparateRunE2E, AProgramOffTheRuntimeRunsOnce) {
  TempDir dir;
  const std::string profile = dir.File("sh.cilkprof");
  const ToolResult run = Shell("\"$RUN\" -q -o '" + profile + "' -- /bin/sh -c 'echo run >> " + dir.File("runs") +
                               "; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Lines(dir.File("runs")), 1u);
  EXPECT_FALSE(Summary(profile).contains("workspan_run"));
}

TEST(SeparateRunE2E, AFailedProgramIsNotRunAgain) {
  TempDir dir;
  const std::string profile = dir.File("fib.cilkprof");
  // Long enough (fib 26, 100 us period) that the fib process takes samples: a process
  // that recorded nothing gets no profile, and then nothing to measure either.
  const ToolResult run = Shell("\"$RUN\" --period 100us -o '" + profile + "' -- /bin/sh -c 'echo run >> " +
                               dir.File("runs") + "; \"$0\" 26; exit 3' \"$FIB\"");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(Lines(dir.File("runs")), 1u);
  EXPECT_NE(run.err.find("Work and span    not measured: the program exited with status 3, so it was not run "
                         "again"),
            std::string::npos)
      << run.err;
}

TEST(SeparateRunE2E, AFailedSecondRunLeavesTheSampledProfileAndSaysWhy) {
  TempDir dir;
  const std::string profile = dir.File("fib.cilkprof");
  const std::string mark = dir.File("mark");
  const ToolResult run = Shell("\"$RUN\" --period 100us -o '" + profile + "' -- /bin/sh -c 'if [ -e " + mark +
                               " ]; then echo out of disk space >&2; exit 4; fi; touch " + mark +
                               "; exec \"$0\" 26' \"$FIB\"");
  EXPECT_EQ(run.exit_code, 0) << run.err;  // the program's status is the sampled run's
  EXPECT_NE(run.err.find("Work and span    not measured: the instrumented run (the second run of the program) "
                         "exited with status 4\n    out of disk space"),
            std::string::npos)
      << run.err;
  const Json summary = Summary(profile);
  ASSERT_TRUE(summary.is_object());
  EXPECT_GT(summary.value("samples", 0.0), 0);
  EXPECT_FALSE(summary.contains("workspan_run"));

  // -q silences the summary, not this.
  const ToolResult quiet = Shell("\"$RUN\" -q --period 100us -o '" + dir.File("quiet.cilkprof") +
                                 "' -- /bin/sh -c 'if [ -e " + mark + "2 ]; then echo out of disk space >&2; exit 4; "
                                 "fi; touch " + mark + "2; exec \"$0\" 26' \"$FIB\"");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_NE(quiet.err.find("cilkprof-run: work and span were not measured: the instrumented run (the second run of "
                           "the program) exited with status 4"),
            std::string::npos)
      << quiet.err;
}

}  // namespace
