#include "e2e_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

extern char** environ;

namespace cilkprof::agent::testing {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult RunUnderAgent(const std::string& program, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env, const std::string& dir) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("CILKPROF_", 0) == 0 || entry.rfind("LD_PRELOAD=", 0) == 0) continue;
    env_strings.push_back(entry);
  }
  env_strings.push_back(std::string("LD_PRELOAD=") + CILKPROF_AGENT_PATH);
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> arg_strings = {program};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  RunResult r;
  const int rc = posix_spawn(&r.pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  if (rc != 0) return r;
  int status = 0;
  waitpid(r.pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

std::map<std::string, uint64_t> Facts(const std::string& out) {
  std::map<std::string, uint64_t> facts;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string thread, index, tid_key, cpu_key;
    uint64_t tid = 0, cpu = 0;
    if (words >> thread >> index >> tid_key >> tid >> cpu_key >> cpu && thread == "thread") {
      facts["tid" + index] = tid;
      facts["cpu" + index] = cpu;
    }
  }
  return facts;
}

const ThreadTotals* ThreadByIndex(const ProcessProfile& p, uint32_t index) {
  for (const auto& [tid, t] : p.threads) {
    if (t.thread_index == index) return &t;
  }
  return nullptr;
}

}  // namespace cilkprof::agent::testing
