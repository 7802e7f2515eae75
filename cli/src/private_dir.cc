#include "private_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace cilkprof::cli {
namespace {

// sockaddr_un.sun_path holds 108 bytes with the terminating NUL.
constexpr size_t kMaxSocketPath = 107;

}  // namespace

Result<PrivateDir> PrivateDir::Create() {
  std::vector<std::string> bases;
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) bases.push_back(tmp);
  bases.push_back("/tmp");
  std::string last_error;
  for (const auto& base : bases) {
    std::string pattern = base + "/cilkprof-XXXXXX";
    if (pattern.size() + 16 > kMaxSocketPath) continue;  // room for "/agents.sock"
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data())) return PrivateDir(buffer.data());
    last_error = base + ": " + std::strerror(errno);
  }
  return Status::Error("cannot create a private temporary directory for the agents' socket (" + last_error +
                       "); set TMPDIR to a writable directory");
}

PrivateDir::~PrivateDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace cilkprof::cli
