#include "output_naming.h"

#include <sys/stat.h>

namespace cilkprof::cli {
namespace {

constexpr const char* kSuffix = ".cilkprof";

bool Free(const std::string& path, const std::set<std::string>& taken) {
  struct stat st {};
  return taken.count(path) == 0 && ::lstat(path.c_str(), &st) != 0;
}

std::string FirstFree(const std::string& base, const std::set<std::string>& taken) {
  std::string candidate = base + kSuffix;
  for (unsigned n = 1; !Free(candidate, taken); ++n) {
    candidate = base + "." + std::to_string(n) + kSuffix;
  }
  return candidate;
}

}  // namespace

std::string ProfileStem(const std::string& program) {
  const size_t slash = program.rfind('/');
  std::string stem = slash == std::string::npos ? program : program.substr(slash + 1);
  for (char& c : stem) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '+' || c == '-';
    if (!ok) c = '_';
  }
  // A leading dot would hide the file.
  while (!stem.empty() && stem.front() == '.') stem.erase(stem.begin());
  return stem.empty() ? "program" : stem;
}

std::string FirstFreeProfilePath(const std::string& dir, const std::string& stem,
                                 const std::set<std::string>& taken) {
  return FirstFree(dir.empty() ? stem : dir + "/" + stem, taken);
}

std::string RelatedProfilePath(const std::string& main_path, uint32_t pid, const std::set<std::string>& taken) {
  std::string base = main_path;
  const std::string suffix = kSuffix;
  if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base.resize(base.size() - suffix.size());
  }
  return FirstFree(base + "." + std::to_string(pid), taken);
}

}  // namespace cilkprof::cli
