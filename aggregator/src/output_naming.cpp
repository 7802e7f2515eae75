// Default names of profile files (see output_naming.h).
#include "cilkprof/aggregator/output_naming.h"

#include <unistd.h>

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

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

std::string UniqueProfilePath(const std::string& dir, const ProcessKey& process) {
  std::string prefix = dir.empty() ? std::string(".") : dir;
  if (prefix.back() != '/') prefix += '/';
  prefix += fmt::format("{}.{}", SafeBasename(process.executable), process.pid);
  std::string path = prefix + ".cilkprof";
  for (unsigned n = 1; Exists(path); ++n) path = fmt::format("{}.{}.cilkprof", prefix, n);
  return path;
}

}  // namespace cilkprof::aggregator
