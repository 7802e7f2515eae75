// Injection into live targets (tests/inject/*.c) with the stand-in agent test_agent.c:
// the target's output after the injection must be exactly that of an untouched run.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inject/injector.h"

extern char** environ;

namespace cilkprof::cli::inject {
namespace {

// A temporary directory for markers, removed with its files.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/cilkprof-inject-test-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A target program with its stdin and stdout on pipes to the test.
class Target {
 public:
  Target(const std::string& program, const std::vector<std::string>& extra_env) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) std::abort();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::vector<std::string> env_strings = extra_env;
    for (char** e = environ; *e; ++e) env_strings.push_back(*e);
    std::vector<char*> env;
    for (std::string& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    std::string program_copy = program;
    char* argv[] = {program_copy.data(), nullptr};
    if (::posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv, env.data()) != 0) std::abort();
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    input_ = in[1];
    output_ = ::fdopen(out[0], "r");
  }
  ~Target() {
    CloseInput();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (output_) ::fclose(output_);
  }
  pid_t pid() const { return pid_; }

  // Returns once the target printed its first line ("ready").
  std::string WaitReady() {
    char line[256] = {};
    if (!std::fgets(line, sizeof line, output_)) return "";
    return line;
  }
  void Write(const std::string& text) { ASSERT_EQ(::write(input_, text.data(), text.size()), static_cast<ssize_t>(text.size())); }
  void CloseInput() {
    if (input_ >= 0) ::close(input_);
    input_ = -1;
  }
  // The rest of its output, once it exited; its exit status in *status (-1 when the
  // injector, as its tracer, already collected it).
  std::string Finish(int* status) {
    CloseInput();
    std::string text;
    char chunk[512];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, output_)) > 0) text.append(chunk, n);
    int raw = 0;
    *status = ::waitpid(pid_, &raw, 0) == pid_ && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    pid_ = 0;
    return text;
  }

 private:
  pid_t pid_ = 0;
  int input_ = -1;
  FILE* output_ = nullptr;
};

TEST(InjectE2E, IntoAProcessBlockedInReadWhichRestartsTheRead) {
  TempDir dir;
  const std::string marker = dir.path() + "/marker";
  Target target(INJECT_BLOCKED_READER, {"INJECT_TEST_MARKER=" + marker});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(ReadFile(marker), "started\n");
  EXPECT_EQ(report.threads, 1);
  EXPECT_EQ(report.hijacked_tid, target.pid());
  EXPECT_GT(report.longest_stop.count(), 0);
  EXPECT_TRUE(AgentLoaded(target.pid(), INJECT_TEST_AGENT));

  // A second injection: the agent is there already.
  Status again = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  EXPECT_NE(again.message().find("already loaded"), std::string::npos) << again.message();

  target.Write("hello\n");
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "read: hello\nerrno 42\neintr 0\n");
  EXPECT_EQ(exit_status, 0);
}

TEST(InjectE2E, EveryRegisterComesBackAcrossTheBlockingSystemCall) {
  Target target(INJECT_REGISTER_KEEPER, {});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  ASSERT_TRUE(status.ok()) << status.message();
  target.Write("data\n");
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "read: data\nregisters intact\n");
  EXPECT_EQ(exit_status, 0);
}

TEST(InjectE2E, IntoEightBusyThreads) {
  TempDir dir;
  const std::string marker = dir.path() + "/marker";
  Target target(INJECT_BUSY_THREADS, {"INJECT_TEST_MARKER=" + marker});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(report.threads, 9);
  EXPECT_NE(report.hijacked_tid, 0);
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "finished 9\ncorrect 9\n");
  EXPECT_EQ(exit_status, 0);
}

TEST(InjectE2E, IntoAProcessWithAHeartbeat) {
  Target target(INJECT_HEARTBEAT, {});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(report.threads, 2);
  EXPECT_EQ(report.hijacked_tid, target.pid());  // main, blocked in read, not the heartbeat
  std::printf("longest stop %.3f ms\n", static_cast<double>(report.longest_stop.count()) / 1000.0);
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "ok\n");
  EXPECT_EQ(exit_status, 0);
}

TEST(InjectE2E, AnAgentThatRefusesToStartLeavesTheTargetRunning) {
  Target target(INJECT_BLOCKED_READER, {"INJECT_TEST_FAIL=1"});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("did not start: the test agent was told to fail"), std::string::npos)
      << status.message();
  target.Write("after\n");
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "read: after\nerrno 42\neintr 0\n");
}

TEST(InjectE2E, AFileDlopenRejectsIsReportedWithTheLoadersReason) {
  TempDir dir;
  const std::string not_elf = dir.path() + "/not_an_agent.so";
  std::ofstream(not_elf) << "not a shared object\n";
  ::chmod(not_elf.c_str(), 0644);
  Target target(INJECT_BLOCKED_READER, {});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), not_elf, &report);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("could not load the agent: " + not_elf), std::string::npos) << status.message();
  target.Write("after\n");
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "read: after\nerrno 42\neintr 0\n");
}

TEST(InjectE2E, AProcessThatExitsDuringInjection) {
  Target target(INJECT_BLOCKED_READER, {"INJECT_TEST_EXIT=7"});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "process " + std::to_string(target.pid()) + " exited during injection (exit status 7)");
}

TEST(InjectE2E, RefusesAProcessThatDoesNotExist) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  Status status = CheckInjectable(child, INJECT_TEST_AGENT);
  EXPECT_NE(status.message().find("no process with PID " + std::to_string(child)), std::string::npos)
      << status.message();
}

TEST(InjectE2E, RefusesAStaticBinary) {
  if (std::string(INJECT_STATIC_READER).empty()) GTEST_SKIP() << "the toolchain cannot link a static program";
  Target target(INJECT_STATIC_READER, {});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  InjectionReport report;
  Status status = InjectAgent(target.pid(), INJECT_TEST_AGENT, &report);
  EXPECT_NE(status.message().find("is statically linked"), std::string::npos) << status.message();
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "");
  EXPECT_EQ(exit_status, 0);
}

TEST(InjectE2E, RefusesAProcessTracedBySomeoneElse) {
  Target target(INJECT_BLOCKED_READER, {});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  int seized[2];
  ASSERT_EQ(::pipe(seized), 0);
  pid_t tracer = ::fork();
  if (tracer == 0) {
    char done = ::ptrace(PTRACE_SEIZE, target.pid(), nullptr, nullptr) == 0 ? 'y' : 'n';
    (void)!::write(seized[1], &done, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(seized[1]);
  char done = 0;
  ASSERT_EQ(::read(seized[0], &done, 1), 1);
  ASSERT_EQ(done, 'y');
  Status status = CheckInjectable(target.pid(), INJECT_TEST_AGENT);
  EXPECT_NE(status.message().find("is already traced by process " + std::to_string(tracer)), std::string::npos)
      << status.message();
  ::kill(tracer, SIGKILL);  // its tracee is detached as it dies
  ::waitpid(tracer, nullptr, 0);
  ::close(seized[0]);
  target.Write("after\n");
  int exit_status = 0;
  EXPECT_EQ(target.Finish(&exit_status), "read: after\nerrno 42\neintr 0\n");
}

TEST(InjectE2E, RefusesAnAgentThatDoesNotExist) {
  Target target(INJECT_BLOCKED_READER, {});
  ASSERT_EQ(target.WaitReady(), "ready\n");
  Status status = CheckInjectable(target.pid(), "/nonexistent/libcilkprof_agent.so");
  EXPECT_NE(status.message().find("cannot find the agent /nonexistent/libcilkprof_agent.so"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace cilkprof::cli::inject
