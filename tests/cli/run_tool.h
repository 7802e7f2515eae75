// Runs a program (the built cilkprof tools) with captured output, for CLI tests.
#pragma once

#include <string>
#include <vector>

namespace cilkprof::cli::testing {

struct ToolResult {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs argv (argv[0] is a path) in `cwd` ("" = ours) with extra NAME=VALUE settings.
ToolResult RunTool(const std::vector<std::string>& argv, const std::string& cwd = "",
                   const std::vector<std::string>& extra_env = {});

// A fresh temporary directory, removed with its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& bytes, int mode = 0644);

}  // namespace cilkprof::cli::testing
