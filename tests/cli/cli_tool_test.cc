// The built `cilkprof` and `cilkprof-run`, run as a user would: exit codes and messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cilkprof/aggregator/profile_io.h"
#include "run_tool.h"
#include "views_test_profile.h"

namespace cilkprof::cli {
namespace {

using testing::ReadFile;
using testing::RunTool;
using testing::TempDir;
using testing::ToolResult;
using testing::WriteFile;

const std::string kCilkprof = CILKPROF_TEST_CILKPROF;
const std::string kCilkprofRun = CILKPROF_TEST_CILKPROF_RUN;

bool Contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// One line on stderr (plus CLI11's hint for usage errors), never a crash.
void ExpectCleanError(const ToolResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_TRUE(Contains(r.err, needle)) << "stderr: " << r.err;
  EXPECT_FALSE(Contains(r.err, "terminate called")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

class WithProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("small.cilkprof");
    ASSERT_TRUE(aggregator::WriteProfileFile(path_, views::testing::SmallProfile()).ok());
  }
  TempDir dir_;
  std::string path_;
};

TEST(Usage, UnknownOptionsAndBadValuesExitTwo) {
  ExpectCleanError(RunTool({kCilkprofRun, "--no-such-option", "--", "/bin/true"}), 2, "--no-such-option");
  ExpectCleanError(RunTool({kCilkprof, "run", "--no-such-option", "--", "/bin/true"}), 2, "--no-such-option");
  ExpectCleanError(RunTool({kCilkprof}), 2, "ubcommand is required");
  ExpectCleanError(RunTool({kCilkprof, "frobnicate"}), 2, "frobnicate");
  ExpectCleanError(RunTool({kCilkprof, "view", "sideways", "x.cilkprof"}), 2, "sideways");
  ExpectCleanError(RunTool({kCilkprof, "view", "top-down"}), 2, "profile");
  ExpectCleanError(RunTool({kCilkprof, "view", "flat", "x", "--format", "xml"}), 2, "xml");
  ExpectCleanError(RunTool({kCilkprof, "view", "flat", "x", "--threshold", "150"}), 2, "--threshold");
  ExpectCleanError(RunTool({kCilkprof, "view", "flat", "x", "--depth", "-1"}), 2, "--depth");
  ExpectCleanError(RunTool({kCilkprofRun, "--period", "3", "--", "/bin/true"}), 2, "unit");
  ExpectCleanError(RunTool({kCilkprofRun, "-F", "0", "--", "/bin/true"}), 2, "--freq");
  ExpectCleanError(RunTool({kCilkprofRun, "-F", "10", "--period", "1ms", "--", "/bin/true"}), 2, "excludes");
  ExpectCleanError(RunTool({kCilkprofRun, "--clock", "sundial", "--", "/bin/true"}), 2, "sundial");
  ExpectCleanError(RunTool({kCilkprofRun}), 2, "no program given");
}

TEST(Usage, HelpAndVersionSucceed) {
  const ToolResult help = RunTool({kCilkprof, "view", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "--hot-path"));
  const ToolResult run_help = RunTool({kCilkprofRun, "--help"});
  EXPECT_EQ(run_help.exit_code, 0);
  EXPECT_TRUE(Contains(run_help.out, "--no-follow-fork"));
  EXPECT_EQ(RunTool({kCilkprof, "--version"}).exit_code, 0);
}

TEST(Run, ProgramsThatCannotBeProfiledFailCleanly) {
  TempDir dir;
  ExpectCleanError(RunTool({kCilkprofRun, "--", "/nonexistent/program"}), 127, "not found");
  ExpectCleanError(RunTool({kCilkprof, "run", "--", "no-such-command-xyz"}), 127, "not found in PATH");
  WriteFile(dir.File("plain.txt"), "x\n", 0644);
  ExpectCleanError(RunTool({kCilkprofRun, "--", dir.File("plain.txt")}), 126, "not executable");
  WriteFile(dir.File("notelf"), "not a program\n", 0755);
  ExpectCleanError(RunTool({kCilkprofRun, "--", dir.File("notelf")}), 126, "neither an ELF");
  if (!std::string(CILKPROF_TEST_STATIC_PROGRAM).empty()) {
    ExpectCleanError(RunTool({kCilkprofRun, "--", CILKPROF_TEST_STATIC_PROGRAM}), 126, "static binary");
  }
  // Nothing was written for programs that never ran.
  EXPECT_TRUE(ReadFile(dir.File("plain.cilkprof")).empty());
}

TEST(Run, AnExplicitOutputThatExistsNeedsForce) {
  TempDir dir;
  WriteFile(dir.File("keep.cilkprof"), "precious");
  ExpectCleanError(RunTool({kCilkprofRun, "-o", dir.File("keep.cilkprof"), "--", "/bin/true"}), 2, "already exists");
  EXPECT_EQ(ReadFile(dir.File("keep.cilkprof")), "precious");
  ExpectCleanError(RunTool({kCilkprofRun, "-o", dir.File("no/such/dir/x.cilkprof"), "--", "/bin/true"}), 2,
                   "does not exist");
}

TEST(Run, AMissingAgentIsReported) {
  ExpectCleanError(RunTool({kCilkprofRun, "--", "/bin/true"}, "", {"CILKPROF_AGENT=/nonexistent/agent.so"}), 125,
                   "CILKPROF_AGENT=/nonexistent/agent.so");
}

TEST_F(WithProfile, ViewsInEveryFormat) {
  for (const char* view : {"top-down", "bottom-up", "flat"}) {
    const ToolResult text = RunTool({kCilkprof, "view", view, path_});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(Contains(text.out, "Incl work (ms)   Incl%  Excl work (ms)")) << text.out;
    EXPECT_TRUE(Contains(text.out, std::string("# cilkprof ") + view + " view of " + path_)) << text.out;
    const ToolResult json = RunTool({kCilkprof, "view", view, "--format", "json", path_});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto tree = nlohmann::json::parse(json.out);
    EXPECT_EQ(tree["name"], "<program root>");
    EXPECT_DOUBLE_EQ(tree["metrics"]["work"]["inclusive"].get<double>(), 13.5e6);
    const ToolResult csv = RunTool({kCilkprof, "view", view, "--format", "csv", path_});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("depth,path,name,file,line,module,edge,", 0), 0u) << csv.out;
  }
  const ToolResult focused = RunTool({kCilkprof, "view", "top-down", path_, "--focus", "a", "--hot-path",
                                      "--metric", "samples", "--depth", "2"});
  ASSERT_EQ(focused.exit_code, 0) << focused.err;
  EXPECT_TRUE(Contains(focused.out, "\n           6   42.9%             0    0.0%  a\n")) << focused.out;
  EXPECT_TRUE(Contains(focused.out, "      b\n")) << focused.out;
  EXPECT_FALSE(Contains(focused.out, "??")) << focused.out;  // depth 2 stops above it
}

TEST_F(WithProfile, CallSitesTitleNamesNoUnitBesideTheScaledColumns) {
  // The columns are scaled like every view's (ms here); the title once named the
  // recorded unit, "ns", above columns labelled "(ms)".
  profile::Profile p = views::testing::SmallProfile();
  auto* workspan = p.mutable_workspan();
  workspan->set_clock("tsc");
  workspan->set_unit("ns");
  workspan->set_work(2'500'000);
  workspan->set_span(1'000'000);
  auto* site = workspan->add_call_sites();
  site->set_kind(wire::WORKSPAN_CALL);
  site->set_location(1);
  site->set_count(1);
  site->set_work_on_work(2'500'000);
  site->set_span_on_work(1'000'000);
  site->set_work_on_span(2'500'000);
  site->set_span_on_span(1'000'000);
  const std::string path = dir_.File("sites.cilkprof");
  ASSERT_TRUE(aggregator::WriteProfileFile(path, p).ok());
  const ToolResult text = RunTool({kCilkprof, "view", "callsites", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string title = text.out.substr(0, text.out.find('\n'));
  EXPECT_EQ(title.substr(title.rfind(';')), "; work and span per call site") << title;
  EXPECT_TRUE(Contains(text.out, "\nwork-on-work (ms)  span-on-work (ms)  work-on-span (ms)  span-on-span (ms)"))
      << text.out;
  EXPECT_TRUE(Contains(text.out, "\n              2.5                1.0                2.5                1.0"))
      << text.out;
}

TEST_F(WithProfile, TextHidesRowsUnderHalfAPercentUnlessAsked) {
  profile::Profile p = views::testing::SmallProfile();
  auto* tiny = p.add_nodes();  // main > b: 1 us of 13.5 ms, 0.007%
  tiny->set_parent(1);
  tiny->set_location(4);
  tiny->add_exclusive(0);
  tiny->add_exclusive(1000);
  const std::string path = dir_.File("tiny.cilkprof");
  ASSERT_TRUE(aggregator::WriteProfileFile(path, p).ok());
  const ToolResult text = RunTool({kCilkprof, "view", "top-down", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Contains(text.out, "; rows under 0.5% hidden (--threshold 0 shows all)\n")) << text.out;
  EXPECT_FALSE(Contains(text.out, "0.0%      b\n")) << text.out;
  const ToolResult all = RunTool({kCilkprof, "view", "top-down", "--threshold", "0", path});
  EXPECT_FALSE(Contains(all.out, "rows under")) << all.out;
  EXPECT_TRUE(Contains(all.out, "0.0%      b\n")) << all.out;
  EXPECT_GT(std::count(all.out.begin(), all.out.end(), '\n'), std::count(text.out.begin(), text.out.end(), '\n'));
  // Scripts get every row unless they ask otherwise.
  const ToolResult csv = RunTool({kCilkprof, "view", "top-down", "--format", "csv", path});
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), std::count(all.out.begin(), all.out.end(), '\n') - 1);
}

TEST_F(WithProfile, ViewErrorsAboutTheProfilesContents) {
  ExpectCleanError(RunTool({kCilkprof, "view", "top-down", path_, "--metric", "cycles"}), 2, "samples, work");
  ExpectCleanError(RunTool({kCilkprof, "view", "top-down", path_, "--focus", "nosuch"}), 1, "no function named");
}

TEST_F(WithProfile, Summary) {
  const ToolResult text = RunTool({kCilkprof, "summary", path_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Contains(text.out, "Samples          14\n")) << text.out;
  const ToolResult json = RunTool({kCilkprof, "summary", "--format", "json", path_});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto summary = nlohmann::json::parse(json.out);
  for (const char* key : {"samples", "threads", "duration_s", "partial_unwind_rate", "work"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
}

TEST_F(WithProfile, ViewLocksInEveryFormatAndWithoutLocks) {
  const std::string path = dir_.File("locks.cilkprof");
  ASSERT_TRUE(aggregator::WriteProfileFile(path, views::testing::LockProfile()).ok());
  const ToolResult text = RunTool({kCilkprof, "view", "locks", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Contains(text.out, "; wait and blame per lock, hottest first; locks under 0.5% of the wait hidden "
                                 "(--threshold 0 shows all)\nwait (ms)")) << text.out;
  EXPECT_TRUE(Contains(text.out, "mutex  g_mutex ")) << text.out;
  const ToolResult json = RunTool({kCilkprof, "view", "locks", "--format", "json", "--focus", "hold_long", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto locks = nlohmann::json::parse(json.out);
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0]["lock"], "g_mutex");
  const ToolResult csv = RunTool({kCilkprof, "view", "locks", "--format", "csv", "--threshold", "50", path});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 2) << csv.out;  // the header and g_mutex
  ExpectCleanError(RunTool({kCilkprof, "view", "locks", path_}), 1, "has no lock data: no thread waited for");
  ExpectCleanError(RunTool({kCilkprof, "view", "locks", "--focus", "nosuch", path}), 1, "no lock's name");
  // The top-down view shows the lock leaf; lock_blame sorts like any metric.
  const ToolResult tree = RunTool({kCilkprof, "view", "top-down", "--metric", "lock_blame", path});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_TRUE(Contains(tree.out, "[lock g_mutex]\n")) << tree.out;
  const ToolResult summary = RunTool({kCilkprof, "summary", path});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_TRUE(Contains(summary.out, "Interpretation   shrink or split the critical section at hold_long() (prog.cc:22)\n"))
      << summary.out;
}

TEST_F(WithProfile, CorruptAndTruncatedProfilesGiveTheReadersMessage) {
  const std::string bytes = ReadFile(path_);
  ASSERT_GT(bytes.size(), 40u);

  std::string corrupt = bytes;
  corrupt[corrupt.size() - 5] ^= 0x5a;
  WriteFile(dir_.File("corrupt.cilkprof"), corrupt);
  const auto expected_corrupt = aggregator::ReadProfileFile(dir_.File("corrupt.cilkprof"));
  ASSERT_FALSE(expected_corrupt.ok());
  ExpectCleanError(RunTool({kCilkprof, "view", "top-down", dir_.File("corrupt.cilkprof")}), 1,
                   expected_corrupt.status().message());

  WriteFile(dir_.File("truncated.cilkprof"), bytes.substr(0, bytes.size() / 2));
  const ToolResult truncated = RunTool({kCilkprof, "view", "flat", dir_.File("truncated.cilkprof")});
  ExpectCleanError(truncated, 1, "truncated");
  EXPECT_TRUE(Contains(truncated.err, dir_.File("truncated.cilkprof")));

  WriteFile(dir_.File("garbage.cilkprof"), "this is not a profile at all, not even close");
  ExpectCleanError(RunTool({kCilkprof, "summary", dir_.File("garbage.cilkprof")}), 1, "garbage.cilkprof");
  ExpectCleanError(RunTool({kCilkprof, "view", "top-down", dir_.File("missing.cilkprof")}), 1, "missing.cilkprof");
}

TEST(Import, MissingSpillFileFailsCleanly) {
  TempDir dir;
  ExpectCleanError(RunTool({kCilkprof, "import", dir.File("nothing.spill"), "-o", dir.File("x.cilkprof")}), 1,
                   "nothing.spill");
  WriteFile(dir.File("junk.spill"), "junk");
  WriteFile(dir.File("taken.cilkprof"), "precious");
  ExpectCleanError(RunTool({kCilkprof, "import", dir.File("junk.spill"), "-o", dir.File("taken.cilkprof")}), 2,
                   "already exists");
  EXPECT_EQ(ReadFile(dir.File("taken.cilkprof")), "precious");
  const ToolResult junk = RunTool({kCilkprof, "import", dir.File("junk.spill"), "-o", dir.File("new.cilkprof")});
  EXPECT_EQ(junk.exit_code, 1) << junk.err;
  EXPECT_FALSE(Contains(junk.err, "terminate called"));
}

}  // namespace
}  // namespace cilkprof::cli
