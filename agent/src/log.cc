#include "log.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cilkprof::agent {
namespace {
bool g_quiet = false;
bool g_silent = false;  // set before any thread but the caller can log
pthread_mutex_t g_silenced_mu = PTHREAD_MUTEX_INITIALIZER;
std::vector<std::string>* g_silenced = nullptr;  // never freed: threads may log at exit
constexpr size_t kMaxSilencedLines = 32;
}  // namespace

void SetSilent(bool silent) { g_silent = silent; }

std::vector<std::string> TakeSilencedLines() {
  std::vector<std::string> lines;
  pthread_mutex_lock(&g_silenced_mu);
  if (g_silenced != nullptr) lines.swap(*g_silenced);
  pthread_mutex_unlock(&g_silenced_mu);
  return lines;
}

void LogLine(const std::string& message) {
  const int saved = errno;
  if (g_silent) {
    pthread_mutex_lock(&g_silenced_mu);
    if (g_silenced == nullptr) g_silenced = new std::vector<std::string>();
    if (g_silenced->size() == kMaxSilencedLines) g_silenced->erase(g_silenced->begin());
    g_silenced->push_back(message);
    pthread_mutex_unlock(&g_silenced_mu);
    errno = saved;
    return;
  }
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
