// Pieces of `cilkprof run`: output names, periods, program checks, agent lookup.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "agent_locator.h"
#include "duration.h"
#include "output_naming.h"
#include "program_check.h"
#include "progress.h"
#include "stderr_logging.h"

#include <spdlog/spdlog.h>
#include "run_tool.h"

#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <cstdio>

namespace cilkprof::cli {
namespace {

using testing::TempDir;
using testing::WriteFile;

TEST(OutputNaming, DefaultNameNeverOverwrites) {
  TempDir dir;
  EXPECT_EQ(FirstFreeProfilePath(dir.path(), "fib", {}), dir.File("fib.cilkprof"));
  WriteFile(dir.File("fib.cilkprof"), "x");
  EXPECT_EQ(FirstFreeProfilePath(dir.path(), "fib", {}), dir.File("fib.1.cilkprof"));
  WriteFile(dir.File("fib.1.cilkprof"), "x");
  EXPECT_EQ(FirstFreeProfilePath(dir.path(), "fib", {}), dir.File("fib.2.cilkprof"));
  // Names handed out earlier in the same run count as taken.
  EXPECT_EQ(FirstFreeProfilePath(dir.path(), "fib", {dir.File("fib.2.cilkprof")}), dir.File("fib.3.cilkprof"));
  // A dangling symlink is a name in use too.
  ASSERT_EQ(::symlink("/nonexistent", dir.File("fib.2.cilkprof").c_str()), 0);
  EXPECT_EQ(FirstFreeProfilePath(dir.path(), "fib", {}), dir.File("fib.3.cilkprof"));
  EXPECT_EQ(FirstFreeProfilePath("", "fib", {}).find('/'), std::string::npos);
}

TEST(OutputNaming, RelatedProfilesSitNextToTheMainOne) {
  TempDir dir;
  EXPECT_EQ(RelatedProfilePath(dir.File("run.cilkprof"), 77, {}), dir.File("run.77.cilkprof"));
  WriteFile(dir.File("run.77.cilkprof"), "x");
  EXPECT_EQ(RelatedProfilePath(dir.File("run.cilkprof"), 77, {}), dir.File("run.77.1.cilkprof"));
  EXPECT_EQ(RelatedProfilePath(dir.File("out.data"), 5, {}), dir.File("out.data.5.cilkprof"));
}

TEST(OutputNaming, StemIsASafeBasename) {
  EXPECT_EQ(ProfileStem("/usr/bin/python3.11"), "python3.11");
  EXPECT_EQ(ProfileStem("./my prog"), "my_prog");
  EXPECT_EQ(ProfileStem("/x/.hidden"), "hidden");
  EXPECT_EQ(ProfileStem(""), "program");
}

TEST(Period, ParsesUnitsAndRejectsTheRest) {
  EXPECT_EQ(*ParsePeriod("1ms"), 1'000'000u);
  EXPECT_EQ(*ParsePeriod("500us"), 500'000u);
  EXPECT_EQ(*ParsePeriod("0.5ms"), 500'000u);
  EXPECT_EQ(*ParsePeriod("2s"), 2'000'000'000u);
  EXPECT_EQ(*ParsePeriod("250000ns"), 250'000u);
  for (const char* bad : {"", "3", "1 ms", "ms", "1min", "-1ms", "1us", "11s", "nanms"}) {
    EXPECT_FALSE(ParsePeriod(bad).ok()) << bad;
  }
  EXPECT_NE(ParsePeriod("3").status().message().find("unit"), std::string::npos);
  EXPECT_EQ(*PeriodFromFrequency(1000), 1'000'000u);
  EXPECT_EQ(*PeriodFromFrequency(99), 10'101'010u);
  EXPECT_FALSE(PeriodFromFrequency(0).ok());
  EXPECT_FALSE(PeriodFromFrequency(-5).ok());
  EXPECT_FALSE(PeriodFromFrequency(1e6).ok());
}

TEST(ProgramCheck, FindsProgramsLikeExecvp) {
  const ProgramCheck sh = CheckProgram("sh", "/nonexistent:/bin:/usr/bin");
  EXPECT_TRUE(sh.error.empty()) << sh.error;
  EXPECT_EQ(sh.path, "/bin/sh");
  const ProgramCheck missing = CheckProgram("no-such-program-xyz", "/bin:/usr/bin");
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.error.find("not found"), std::string::npos);
  EXPECT_EQ(CheckProgram("/nonexistent/prog", nullptr).exit_code, 127);
}

TEST(ProgramCheck, RejectsWhatTheAgentCannotBePreloadedInto) {
  TempDir dir;
  WriteFile(dir.File("data.txt"), "hello\n", 0644);
  const ProgramCheck plain = CheckProgram(dir.File("data.txt"), nullptr);
  EXPECT_EQ(plain.exit_code, 126);
  EXPECT_NE(plain.error.find("not executable"), std::string::npos) << plain.error;

  WriteFile(dir.File("text"), "just text\n", 0755);
  const ProgramCheck text = CheckProgram(dir.File("text"), nullptr);
  EXPECT_EQ(text.exit_code, 126);
  EXPECT_NE(text.error.find("neither an ELF"), std::string::npos) << text.error;

  const ProgramCheck directory = CheckProgram(dir.path(), nullptr);
  EXPECT_EQ(directory.exit_code, 126);
  EXPECT_NE(directory.error.find("directory"), std::string::npos);

  WriteFile(dir.File("script.sh"), "#!/bin/sh\necho hi\n", 0755);
  EXPECT_TRUE(CheckProgram(dir.File("script.sh"), nullptr).error.empty());
  WriteFile(dir.File("bad_interp.sh"), "#!/nonexistent/shell\n", 0755);
  const ProgramCheck interp = CheckProgram(dir.File("bad_interp.sh"), nullptr);
  EXPECT_EQ(interp.exit_code, 126);
  EXPECT_NE(interp.error.find("interpreter"), std::string::npos);

  // A truncated ELF header is not an executable we can judge: refuse, do not crash.
  WriteFile(dir.File("short_elf"), std::string("\x7f" "ELF\x02", 5), 0755);
  EXPECT_EQ(CheckProgram(dir.File("short_elf"), nullptr).exit_code, 126);
}

TEST(ProgramCheck, RefusesStaticBinaries) {
  if (std::string(CILKPROF_TEST_STATIC_PROGRAM).empty()) GTEST_SKIP() << "the toolchain cannot link -static";
  const ProgramCheck check = CheckProgram(CILKPROF_TEST_STATIC_PROGRAM, nullptr);
  EXPECT_EQ(check.exit_code, 126);
  EXPECT_NE(check.error.find("static binary: the agent cannot be preloaded into it; relink it dynamically"),
            std::string::npos) << check.error;
}

TEST(AgentLocator, OverrideThenBuildTreeThenInstalled) {
  TempDir root;
  ::mkdir(root.File("bin").c_str(), 0755);
  ::mkdir(root.File("lib").c_str(), 0755);
  ::mkdir(root.File("lib/cilkprof").c_str(), 0755);
  const std::string bin = root.File("bin");
  EXPECT_FALSE(LocateAgent(nullptr, bin, "/nonexistent").ok());
  EXPECT_NE(LocateAgent(nullptr, bin, "/nonexistent").status().message().find("CILKPROF_AGENT"), std::string::npos);
  WriteFile(root.File("lib/cilkprof/libcilkprof_agent.so"), "x");
  EXPECT_EQ(*LocateAgent(nullptr, bin, "/nonexistent"), root.File("lib/cilkprof/libcilkprof_agent.so"));
  WriteFile(root.File("lib/libcilkprof_agent.so"), "x");
  EXPECT_EQ(*LocateAgent(nullptr, bin, "/nonexistent"), root.File("lib/libcilkprof_agent.so"));
  EXPECT_EQ(*LocateAgent(root.File("lib/cilkprof/libcilkprof_agent.so").c_str(), bin, ""),
            root.File("lib/cilkprof/libcilkprof_agent.so"));
  auto missing = LocateAgent("/nonexistent/agent.so", bin, "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/agent.so"), std::string::npos);
}

// A tree configured for /usr (libdir lib/x86_64-linux-gnu) and installed, or moved,
// elsewhere: the agent is found below the executable's prefix, not at the configured
// libdir.
TEST(AgentLocator, AMultiarchInstallTreeFindsItsOwnAgent) {
  TempDir root;
  for (const char* dir : {"bin", "lib", "lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu/cilkprof"}) {
    ::mkdir(root.File(dir).c_str(), 0755);
  }
  const std::string bin = root.File("bin");
  WriteFile(root.File("lib/x86_64-linux-gnu/cilkprof/libcilkprof_agent.so"), "x");
  auto found = LocateAgent(nullptr, bin, "/usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, root.File("lib/x86_64-linux-gnu/cilkprof/libcilkprof_agent.so"));
  // Without the relative libdir (as before) it looked only in lib/ and the configured one.
  EXPECT_FALSE(LocateAgent(nullptr, bin, "/usr/lib/x86_64-linux-gnu", "lib").ok());
}

TEST(Progress, LineSaysWhatAndHowLong) {
  EXPECT_EQ(Progress::Line("writing the profile", 2.34), "cilkprof: writing the profile... 2.3 s");
}

TEST(Progress, SilentWhenNotATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    Progress progress(true, file, std::chrono::milliseconds(0));
    progress.Stage("writing the profile");
  }
  EXPECT_EQ(std::ftell(file), 0);
  std::fclose(file);
}

// On a terminal (a pseudo-terminal here) the line appears once the delay has passed,
// and is erased when the work is done. Reads until the text arrives; no timing asserted.
TEST(Progress, ShownOnATerminalAndErasedAtTheEnd) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  std::FILE* terminal = ::fdopen(slave, "w");
  ASSERT_NE(terminal, nullptr);
  std::string seen;
  auto read_until = [&](const std::string& needle) {
    char buffer[256];
    while (seen.find(needle) == std::string::npos) {
      pollfd fd{master, POLLIN, 0};
      if (::poll(&fd, 1, 60'000) <= 0) return false;
      const ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) return false;
      seen.append(buffer, static_cast<size_t>(n));
    }
    return true;
  };
  {
    Progress progress(true, terminal, std::chrono::milliseconds(0));
    progress.Stage("writing the profile");
    EXPECT_TRUE(read_until("cilkprof: writing the profile... ")) << seen;
  }
  std::fclose(terminal);  // everything written is now readable; then the master sees the end
  read_until("\n<end of output>");
  const size_t erased = seen.rfind("\r\033[K");
  ASSERT_NE(erased, std::string::npos) << seen;
  EXPECT_GT(erased, seen.rfind("cilkprof:")) << "the line is erased last: " << seen;
  EXPECT_EQ(seen.substr(erased), "\r\033[K");
  ::close(master);
}

// Collector messages carry program names and paths the program chose: on our stderr
// they are escaped, so a newline cannot forge a line of ours.
TEST(StderrLogging, MessagesGoToStderrEscaped) {
  std::FILE* capture = std::tmpfile();
  ASSERT_NE(capture, nullptr);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_EQ(::dup2(::fileno(capture), STDERR_FILENO), STDERR_FILENO);
  RouteLogsToStderr(spdlog::level::warn);
  spdlog::warn("profile of /tmp/evil\ncilkprof: all good\x1b[2J written");
  spdlog::info("not shown below the level");
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::rewind(capture);
  char buffer[512] = {};
  const size_t n = std::fread(buffer, 1, sizeof buffer - 1, capture);
  std::fclose(capture);
  EXPECT_EQ(std::string(buffer, n), "cilkprof: profile of /tmp/evil\\ncilkprof: all good\\x1b[2J written\n");
}

}  // namespace
}  // namespace cilkprof::cli
