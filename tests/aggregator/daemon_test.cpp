// cilkprofd as a process: it serves agents, names profiles without overwriting, and on
// SIGTERM writes open sessions as "connection lost", removes its socket and exits 0.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cilkprof/aggregator/profile_io.h"
#include "fake_agent.h"
#include "profile_paths.h"
#include "temp_dir.h"

extern char** environ;

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// Waits for cilkprofd's socket; the daemon creates it only once it is listening.
bool WaitForSocket(const std::string& path, pid_t daemon) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  struct stat st {};
  while (::lstat(path.c_str(), &st) != 0) {
    int status = 0;
    if (::waitpid(daemon, &status, WNOHANG) == daemon) return false;  // it died
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(CilkprofdTest, ServesAgentsAndShutsDownCleanlyOnSigterm) {
  TempDir dir;
  const std::string socket = dir.File("d.sock");
  std::ofstream(dir.File("synthetic.8001.cilkprof")) << "an older profile";
  const pid_t daemon = Spawn({CILKPROFD_PATH, "--socket", socket, "--output-dir", dir.path(),
                              "--log-level", "warn"});
  ASSERT_GT(daemon, 0);
  ASSERT_TRUE(WaitForSocket(socket, daemon));

  const auto finished = SyntheticAgentStream(8001, 1);
  const auto unfinished = SyntheticAgentStream(8002, 2, 3, 2, /*goodbye=*/false);
  {
    ClientSocket agent(socket);
    ASSERT_TRUE(agent.Send(Frames(finished), 64));
  }
  ClientSocket open_agent(socket);  // still connected at SIGTERM
  ASSERT_TRUE(open_agent.Send(Frames(unfinished)));
  { ClientSocket garbage(socket); garbage.Send("garbage that is not a frame stream"); }

  ASSERT_EQ(::kill(daemon, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(daemon, &status, 0), daemon);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  struct stat st {};
  EXPECT_NE(::lstat(socket.c_str(), &st), 0) << "socket left behind";

  auto first = ReadProfileFile(dir.File("synthetic.8001.1.cilkprof"));  // .cilkprof was taken
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->process().end_reason(), "exit");
  EXPECT_EQ(first->nodes_size(), ExpectedProfile(finished).nodes_size());
  EXPECT_EQ(first->totals().samples(), ExpectedProfile(finished).totals().samples());

  auto second = ReadProfileFile(dir.File("synthetic.8002.cilkprof"));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->process().end_reason(), "connection lost");
  EXPECT_EQ(second->nodes_size(), ExpectedProfile(unfinished).nodes_size());

  std::ifstream older(dir.File("synthetic.8001.cilkprof"));
  std::string content;
  std::getline(older, content);
  EXPECT_EQ(content, "an older profile");
}

TEST(CilkprofdTest, BadCommandLineAndMissingDirectoryExitNonZero) {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{CILKPROFD_PATH, "--no-such-option"},
        {CILKPROFD_PATH, "--socket", dir.File("s.sock"), "--output-dir", dir.File("missing")}}) {
    const pid_t pid = Spawn(args);
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "crashed: " << status;
    EXPECT_NE(WEXITSTATUS(status), 0);
  }
}

}  // namespace
}  // namespace cilkprof::aggregator
