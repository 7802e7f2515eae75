#include "log.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cilkprof::agent {
namespace {
bool g_quiet = false;
}

void LogLine(const std::string& message) {
  const int saved = errno;
  std::string line = "cilkprof: " + message + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  errno = saved;
}

void SetQuiet(bool quiet) { g_quiet = quiet; }

void LogInfo(const std::string& message) {
  if (!g_quiet) LogLine(message);
}

std::string ErrnoText(int error) {
  char buf[128];
  // GNU strerror_r returns the message (possibly not in buf).
  return std::string(strerror_r(error, buf, sizeof buf));
}

}  // namespace cilkprof::agent
