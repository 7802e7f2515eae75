#include "run_tool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace cilkprof::cli::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "cilkprof-cli-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const std::string& path, const std::string& bytes, int mode) {
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
  ::chmod(path.c_str(), static_cast<mode_t>(mode));
}

ToolResult RunTool(const std::vector<std::string>& argv, const std::string& cwd,
                   const std::vector<std::string>& extra_env) {
  TempDir capture;
  const std::string out_path = capture.File("out");
  const std::string err_path = capture.File("err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const auto& setting : extra_env) env.push_back(setting);
  std::vector<char*> c_env;
  for (auto& s : env) c_env.push_back(s.data());
  c_env.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (auto& s : args) c_argv.push_back(s.data());
  c_argv.push_back(nullptr);

  ToolResult result;
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.err = "posix_spawn failed";
    return result;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

}  // namespace cilkprof::cli::testing
