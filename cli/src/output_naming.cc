#include "output_naming.h"

#include <sys/stat.h>
#include <unistd.h>

#include "cilkprof/aggregator/profile_io.h"

namespace cilkprof::cli {
namespace {

constexpr const char* kSuffix = ".cilkprof";

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool Free(const std::string& path, const std::set<std::string>& taken) {
  return taken.count(path) == 0 && !Exists(path);
}

std::string FirstFree(const std::string& base, const std::set<std::string>& taken) {
  std::string candidate = base + kSuffix;
  for (unsigned n = 1; !Free(candidate, taken); ++n) {
    candidate = base + "." + std::to_string(n) + kSuffix;
  }
  return candidate;
}

// "<main without .cilkprof>.<tag>.cilkprof", then ".<tag>.N.cilkprof".
std::string SiblingProfilePath(const std::string& main_path, const std::string& tag,
                               const std::set<std::string>& taken) {
  std::string base = main_path;
  const std::string suffix = kSuffix;
  if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base.resize(base.size() - suffix.size());
  }
  return FirstFree(base + "." + tag, taken);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
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
  return SiblingProfilePath(main_path, std::to_string(pid), taken);
}

std::string OutputProblem(const std::string& path, bool force) {
  if (!path.empty()) return ExplicitOutputProblem(path, force);
  if (::access(".", W_OK | X_OK) != 0) {
    return "the current directory is not writable, so the profile cannot be written there; give -o FILE";
  }
  return "";
}

std::string ExplicitOutputProblem(const std::string& path, bool force) {
  struct stat st {};
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return "'" + path + "' is a directory; give the profile a file name (-o " +
           (path.back() == '/' ? path : path + "/") + "NAME.cilkprof)";
  }
  if (const std::string kind = aggregator::NonRegularFileKind(path); !kind.empty()) {
    return "will not replace '" + path + "' with a profile: it is " + kind +
           ", not a regular file; give -o the name of a regular file or of a new one";
  }
  if (exists && !force) {
    return "'" + path + "' already exists; choose another -o FILE, or add -f/--force to replace it";
  }
  const std::string dir = DirectoryOf(path);
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0) {
    return "cannot write the profile to '" + path + "': directory '" + dir + "' does not exist";
  }
  if (!S_ISDIR(dir_st.st_mode)) {
    return "cannot write the profile to '" + path + "': '" + dir + "' is not a directory";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot write the profile to '" + path + "': directory '" + dir + "' is not writable";
  }
  return "";
}

ProfileNaming::ProfileNaming(std::string explicit_path, bool force, std::string stem)
    : explicit_(std::move(explicit_path)), force_(force), stem_(std::move(stem)) {
  main_ = explicit_.empty() ? FirstFreeProfilePath("", stem_, {}) : explicit_;
}

void ProfileNaming::ProgramStarted(std::optional<uint32_t> pid) {
  {
    std::lock_guard lock(mutex_);
    if (started_) return;  // the first word stands
    program_pid_ = pid;
    started_ = true;
  }
  started_cv_.notify_all();
}

bool ProfileNaming::IsProgram(const aggregator::ProcessKey& process) const {
  std::lock_guard lock(mutex_);
  return program_sequence_ && program_pid_ == process.pid && *program_sequence_ == process.sequence;
}

std::string ProfileNaming::PathFor(const aggregator::ProcessKey& process) {
  std::unique_lock lock(mutex_);
  // fork gives us the program's pid at once, but in principle the program (or a
  // process it forked) could connect and end before we note it.
  started_cv_.wait(lock, [&] { return started_; });
  const bool program = program_pid_ == process.pid &&
                       (!program_sequence_ || *program_sequence_ == process.sequence);
  if (program) program_sequence_ = process.sequence;
  std::string path;
  if (!program) {
    std::set<std::string> taken = taken_;
    taken.insert(main_);
    path = RelatedProfilePath(main_, process.pid, taken);
  } else if (explicit_.empty()) {
    // A default name taken while the program ran: the next free one.
    path = Free(main_, taken_) ? main_ : FirstFreeProfilePath("", stem_, taken_);
  } else if (force_) {
    std::set<std::string> taken = taken_;
    taken.insert(main_);
    path = staging_ = SiblingProfilePath(main_, "new", taken);
  } else if (Free(main_, taken_)) {
    path = main_;
  } else {
    // Created by someone else while the program ran (or between our check and the
    // writer's no-replace rename, which then asks again): never overwritten.
    diversion_ = "'" + main_ + "' was created while the program ran and was left as it is (-f replaces it)";
    std::set<std::string> taken = taken_;
    taken.insert(main_);
    path = RelatedProfilePath(main_, process.pid, taken);
  }
  taken_.insert(path);
  return path;
}

void ProfileNaming::Settle(std::vector<aggregator::WrittenProfile>* written) {
  std::lock_guard lock(mutex_);
  if (staging_.empty()) return;
  for (auto& profile : *written) {
    if (profile.path != staging_ || !profile.status.ok()) continue;
    const Status moved = aggregator::MoveProfileFile(staging_, explicit_);
    if (moved.ok()) {
      profile.path = explicit_;
    } else {
      diversion_ = moved.message();
    }
  }
}

std::string ProfileNaming::diversion() const {
  std::lock_guard lock(mutex_);
  return diversion_;
}

}  // namespace cilkprof::cli
