// cilkprofd as a process (issue 12, rows 3, 5 and 9): its default socket sits in a
// private directory it creates and checks, it refuses to start on one someone else
// prepared, TCP needs a shared secret, and text a client chose cannot forge a line
// of its log or reach the terminal of whoever reads it.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "cilkprof/aggregator/profile_io.h"
#include "fake_agent.h"
#include "peer_helpers.h"
#include "temp_dir.h"

extern char** environ;

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

// A spawned cilkprofd; killed and reaped at the end of the test if it is still there
// (a failed assertion must not leave it running, holding the test's output pipe).
struct Daemon {
  pid_t pid = -1;
  std::string log;  // its stderr
  mutable bool reaped = false;
  Daemon() = default;
  Daemon(const Daemon&) = delete;
  Daemon(Daemon&& other) noexcept : pid(other.pid), log(std::move(other.log)), reaped(other.reaped) {
    other.pid = -1;
  }
  ~Daemon() {
    if (pid > 0 && !reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// Starts cilkprofd with `args`, the environment changed by `env` (an empty value
// unsets), stderr to `log`.
Daemon Spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
             const std::string& log) {
  std::vector<std::string> args_storage{CILKPROFD_PATH};
  args_storage.insert(args_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : args_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (env.count(entry.substr(0, entry.find('='))) == 0) env_storage.push_back(entry);
  }
  for (const auto& [name, value] : env) {
    if (!value.empty()) env_storage.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  Daemon daemon;
  daemon.log = log;
  if (::posix_spawn(&daemon.pid, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) {
    daemon.pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return daemon;
}

// Waits for the daemon to exit (killing it after a minute: it should have); its exit
// status, or -1 if it had to be killed.
int ExitStatus(const Daemon& daemon) {
  int status = 0;
  const bool exited = WaitUntil([&] { return ::waitpid(daemon.pid, &status, WNOHANG) == daemon.pid; });
  if (!exited) {
    ::kill(daemon.pid, SIGKILL);
    ::waitpid(daemon.pid, &status, 0);
  }
  daemon.reaped = true;
  return exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits for the socket, or for the daemon to die trying.
bool SocketAppears(const std::string& path, const Daemon& daemon) {
  struct stat st {};
  WaitUntil([&] {
    siginfo_t info{};  // WNOWAIT: ExitStatus reaps it
    return ::lstat(path.c_str(), &st) == 0 ||
           (::waitid(P_PID, daemon.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == daemon.pid);
  });
  return ::lstat(path.c_str(), &st) == 0;
}

class DaemonSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir(runtime_dir_.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(output_dir_.c_str(), 0700), 0);
  }
  TempDir dir_;
  std::string runtime_dir_ = dir_.File("run");  // as $XDG_RUNTIME_DIR
  std::string output_dir_ = dir_.File("out");
  std::string log_ = dir_.File("cilkprofd.log");
};

TEST_F(DaemonSecurityTest, TheDefaultSocketIsInAPrivateDirectory) {
  const Daemon daemon = Spawn({"--output-dir", output_dir_}, {{"XDG_RUNTIME_DIR", runtime_dir_}}, log_);
  ASSERT_GT(daemon.pid, 0);
  const std::string socket = runtime_dir_ + "/cilkprof/cilkprofd.sock";
  ASSERT_TRUE(SocketAppears(socket, daemon)) << ReadAll(log_);
  struct stat st {};
  ASSERT_EQ(::lstat((runtime_dir_ + "/cilkprof").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  ASSERT_EQ(::lstat(socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  {
    ClientSocket agent(socket);
    ASSERT_TRUE(agent.Send(Frames(SyntheticAgentStream(9101, 1))));
  }
  ASSERT_EQ(::kill(daemon.pid, SIGTERM), 0);
  EXPECT_EQ(ExitStatus(daemon), 0) << ReadAll(log_);
  EXPECT_TRUE(ReadProfileFile(output_dir_ + "/synthetic.9101.cilkprof").ok());
}

TEST_F(DaemonSecurityTest, RefusesASocketDirectorySomeoneElsePrepared) {
  const std::string dir = runtime_dir_ + "/cilkprof";
  const std::string elsewhere = dir_.File("elsewhere");
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0);
  struct Case {
    std::string name, expected;
    std::function<void()> prepare;
  };
  std::vector<Case> cases{
      {"readable by others", "chmod 700", [&] { ::mkdir(dir.c_str(), 0755); ::chmod(dir.c_str(), 0755); }},
      {"a symbolic link", "symbolic link", [&] { ::symlink(elsewhere.c_str(), dir.c_str()); }},
  };
  if (::geteuid() == 0) {
    cases.push_back({"another user's", "belongs to uid 65534", [&] {
                       ::mkdir(dir.c_str(), 0700);
                       ::chown(dir.c_str(), 65534, 65534);
                     }});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::remove(dir);
    c.prepare();
    const Daemon daemon = Spawn({"--output-dir", output_dir_}, {{"XDG_RUNTIME_DIR", runtime_dir_}}, log_);
    ASSERT_GT(daemon.pid, 0);
    EXPECT_EQ(ExitStatus(daemon), 1) << "it started on a socket directory " << c.name;
    const std::string log = ReadAll(log_);
    EXPECT_NE(log.find(c.expected), std::string::npos) << log;
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << "one clear message:\n" << log;
  }
}

TEST_F(DaemonSecurityTest, TcpNeedsASharedSecret) {
  const Daemon daemon = Spawn({"--socket", dir_.File("d.sock"), "--output-dir", output_dir_, "--tcp",
                               "127.0.0.1:0"},
                              {}, log_);
  ASSERT_GT(daemon.pid, 0);
  EXPECT_EQ(ExitStatus(daemon), 2) << "it listened on TCP without authentication";
  EXPECT_NE(ReadAll(log_).find("--tcp needs --tcp-secret-file"), std::string::npos) << ReadAll(log_);
}

TEST_F(DaemonSecurityTest, ClientTextCannotForgeLogLines) {
  const std::string socket = dir_.File("d.sock");
  const Daemon daemon = Spawn({"--socket", socket, "--output-dir", output_dir_}, {}, log_);
  ASSERT_GT(daemon.pid, 0);
  ASSERT_TRUE(SocketAppears(socket, daemon)) << ReadAll(log_);
  const std::string forged = "[2020-01-01 00:00:00.000] [info] wrote profile of pid 1 (/usr/sbin/sshd)";
  const std::string evil = "/tmp/x\n" + forged + "\x1b[2J\xe2\x80\xae";
  {
    ClientSocket agent(socket);
    ASSERT_TRUE(agent.Send(Frames({Hello(9102, evil), Goodbye()})));
  }
  ASSERT_TRUE(WaitUntil([&] { return ReadAll(log_).find("wrote profile of pid 9102") != std::string::npos; }))
      << ReadAll(log_);
  ASSERT_EQ(::kill(daemon.pid, SIGTERM), 0);
  EXPECT_EQ(ExitStatus(daemon), 0);
  const std::string log = ReadAll(log_);
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("[2020-01-01", 0), 0u) << "a forged line:\n" << log;
  }
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "an escape sequence reached the log";
  EXPECT_EQ(log.find("\xe2\x80\xae"), std::string::npos) << "a bidi override reached the log";
  EXPECT_NE(log.find("/tmp/x\\n" + forged + "\\x1b[2J\\u{202e}"), std::string::npos) << log;
}

}  // namespace
}  // namespace cilkprof::aggregator
