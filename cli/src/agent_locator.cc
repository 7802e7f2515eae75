#include "agent_locator.h"

#include <climits>
#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace cilkprof::cli {
namespace {

constexpr const char* kAgentFile = "libcilkprof_agent.so";

bool IsReadableFile(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

std::string Absolute(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : path;
}

}  // namespace

std::string ExecutableDir() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  std::string path(buffer, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

Result<std::string> LocateAgent(const char* env_override, const std::string& executable_dir,
                                const std::string& install_libdir, const std::string& relative_libdir) {
  if (env_override && *env_override) {
    if (!IsReadableFile(env_override)) {
      return Status::Error(std::string("CILKPROF_AGENT=") + env_override +
                           " does not name a readable file; point it at libcilkprof_agent.so or unset it");
    }
    return Absolute(env_override);
  }
  std::vector<std::string> candidates;
  if (!executable_dir.empty()) {
    candidates.push_back(executable_dir + "/../lib/" + kAgentFile);
    if (!relative_libdir.empty() && relative_libdir[0] != '/' && relative_libdir != "lib") {
      candidates.push_back(executable_dir + "/../" + relative_libdir + "/cilkprof/" + kAgentFile);
    }
    candidates.push_back(executable_dir + "/../lib/cilkprof/" + kAgentFile);
  }
  if (!install_libdir.empty()) candidates.push_back(install_libdir + "/cilkprof/" + kAgentFile);
  for (const auto& candidate : candidates) {
    if (IsReadableFile(candidate)) return Absolute(candidate);
  }
  std::string looked;
  for (const auto& candidate : candidates) looked += "\n  " + candidate;
  return Status::Error("cannot find the agent library " + std::string(kAgentFile) + "; looked in:" + looked +
                       "\nbuild the cilkprof_agent target or set CILKPROF_AGENT to its path");
}

}  // namespace cilkprof::cli
