// Default names of profile files (see output_naming.h).
#include "cilkprof/aggregator/output_naming.h"

#include <sys/stat.h>

#include <ctime>

#include <fmt/format.h>

namespace cilkprof::aggregator {
namespace {

std::string SafeBasename(const std::string& executable) {
  const size_t slash = executable.rfind('/');
  std::string base = slash == std::string::npos ? executable : executable.substr(slash + 1);
  for (char& c : base) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '+' || c == '-';
    if (!safe) c = '_';
  }
  if (base.empty() || base == "." || base == "..") base = "process";
  return base;
}

// lstat: a dangling symbolic link is a name in use, too.
bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

std::string UniqueProfilePath(const std::string& dir, const ProcessKey& process) {
  std::string prefix = dir.empty() ? std::string(".") : dir;
  if (prefix.back() != '/') prefix += '/';
  prefix += fmt::format("{}.{}", SafeBasename(process.executable), process.pid);
  if (process.window_start_unix_ns != 0) prefix += "." + UtcTimestamp(process.window_start_unix_ns);
  std::string path = prefix + ".cilkprof";
  for (unsigned n = 1; Exists(path); ++n) path = fmt::format("{}.{}.cilkprof", prefix, n);
  return path;
}

std::string UtcTimestamp(uint64_t unix_ns) {
  const time_t seconds = static_cast<time_t>(unix_ns / 1000000000u);
  tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

}  // namespace cilkprof::aggregator
