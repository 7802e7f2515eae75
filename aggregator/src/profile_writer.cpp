// The aggregator's writer thread (see profile_writer.h).
#include "profile_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/profile_io.h"

namespace cilkprof::aggregator::internal {
namespace {

// How many times output_path is asked again when the name it gave was taken meanwhile.
constexpr int kNameAttempts = 16;

bool Absolute(const char* path) { return path != nullptr && path[0] == '/'; }

// "<cache>/cilkprof" (XDG: $XDG_CACHE_HOME, else ~/.cache), created 0700 if missing;
// "" unless it is a directory of ours (not a link someone planted).
std::string PrivateCacheDirectory() {
  std::string cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); Absolute(xdg)) {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); Absolute(home)) {
    cache = std::string(home) + "/.cache";
  } else {
    return "";
  }
  ::mkdir(cache.c_str(), 0700);
  const std::string dir = cache + "/cilkprof";
  ::mkdir(dir.c_str(), 0700);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return "";
  return dir;
}

// Where a profile goes when it cannot be written where output_path says: the user's
// cache directory (private, kept), then the temporary directory (files there are
// 0600 and created without following links, like every profile).
std::vector<std::string> FallbackDirectories() {
  std::vector<std::string> dirs;
  if (std::string cache = PrivateCacheDirectory(); !cache.empty()) dirs.push_back(cache);
  const char* tmp = std::getenv("TMPDIR");
  dirs.push_back(Absolute(tmp) ? tmp : "/tmp");
  if (dirs.back() != "/tmp") dirs.push_back("/tmp");
  return dirs;
}

// Writes `profile` under a new name ("<program>.<pid>.cilkprof") in the first fallback
// directory that takes it; its path, or "" when none did (`why` then says why).
std::string WriteToFallback(const ProcessKey& key, const profile::Profile& profile, std::string* why) {
  for (const std::string& dir : FallbackDirectories()) {
    for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
      const std::string path = UniqueProfilePath(dir, key);
      const Status written = WriteNewProfileFile(path, profile);
      if (written.ok()) return path;
      *why = written.message();
      if (written.message().rfind("already exists", 0) != 0) break;  // this directory will not do
    }
  }
  return "";
}

}  // namespace

ProfileWriter::ProfileWriter(const AggregatorOptions& options, SymbolSourceFactory symbols)
    : options_(options), symbols_(std::move(symbols)), thread_([this] { Run(); }) {}

ProfileWriter::~ProfileWriter() { StopAndJoin(); }

void ProfileWriter::Submit(FinishedSession work) {
  std::lock_guard lock(mutex_);
  queue_.push_back(std::move(work));
  cv_.notify_one();
}

void ProfileWriter::StopAndJoin() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<WrittenProfile> ProfileWriter::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

uint64_t ProfileWriter::written_count() const {
  std::lock_guard lock(mutex_);
  return written_count_;
}

uint64_t ProfileWriter::failed_count() const {
  std::lock_guard lock(mutex_);
  return failed_count_;
}

void ProfileWriter::Run() {
  while (true) {
    FinishedSession work;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    WrittenProfile result = Write(work);
    Rotate(work, result);
    if (work.done) work.done(result);
    {
      std::lock_guard lock(mutex_);
      if (result.status.ok()) {
        ++written_count_;
      } else {
        ++failed_count_;
      }
      if (options_.list_written_profiles) written_.push_back(result);
    }
    if (options_.on_written) {
      try {
        options_.on_written(result);
      } catch (const std::exception& e) {
        spdlog::error("the on_written callback failed: {}", e.what());
      }
    }
  }
}

WrittenProfile ProfileWriter::Write(const FinishedSession& work) {
  WrittenProfile result;
  result.process = work.key;
  try {
    std::unique_ptr<SymbolSource> symbols = symbols_();
    const profile::Profile profile = work.session->BuildProfile(*symbols, work.end_unix_ns);
    result.totals = profile.totals();
    result.threads = static_cast<uint32_t>(profile.threads_size());
    const auto& process = profile.process();
    result.runtime = process.runtime();
    if (process.end_unix_ns() > process.start_unix_ns() && process.start_unix_ns() != 0) {
      result.duration_s = double(process.end_unix_ns() - process.start_unix_ns()) / 1e9;
    }
    if (!options_.output_path) {
      result.status = Status::Error("no output path configured for profiles");
    }
    // The chosen name may appear before the rename; ask again rather than overwrite.
    for (int attempt = 0; attempt < kNameAttempts && options_.output_path; ++attempt) {
      const std::string path = options_.output_path(work.key);
      result.status = WriteNewProfileFile(path, profile);
      if (result.status.ok()) {
        result.path = path;
        break;
      }
      if (result.status.message().rfind("already exists", 0) != 0) break;
    }
    if (!result.status.ok()) {
      // Never lost: the status keeps saying why it is not where it was meant to be.
      std::string why;
      result.path = WriteToFallback(work.key, profile, &why);
      if (result.path.empty()) {
        result.status = Status::Error(result.status.message() + "; no fallback directory took it either (" +
                                      why + ")");
      }
    }
  } catch (const std::exception& e) {
    result.status = Status::Error(std::string("building the profile failed: ") + e.what());
  }
  if (result.status.ok() && work.key.window_start_unix_ns != 0) {
    spdlog::info("wrote window {} to {} of pid {} ({}): {} ({} samples, {} threads)",
                 UtcTimestamp(work.key.window_start_unix_ns), UtcTimestamp(work.key.window_end_unix_ns),
                 work.key.pid, work.key.executable, result.path, result.totals.samples(), result.threads);
  } else if (result.status.ok()) {
    spdlog::info("wrote profile of pid {} ({}): {} ({} samples, {} threads)", work.key.pid,
                 work.key.executable, result.path, result.totals.samples(), result.threads);
  } else if (!result.path.empty()) {
    spdlog::warn("could not write the profile of pid {} ({}) where asked: {}; wrote it to {} instead",
                 work.key.pid, work.key.executable, result.status.message(), result.path);
  } else {
    spdlog::error("could not write the profile of pid {} ({}): {}", work.key.pid,
                  work.key.executable, result.status.message());
  }
  return result;
}

void ProfileWriter::Rotate(const FinishedSession& work, const WrittenProfile& written) {
  if (work.key.window_start_unix_ns == 0 || options_.keep_windows == 0) return;
  const auto process = std::make_pair(work.key.pid, work.key.executable);
  std::deque<std::string>& files = window_files_[process];
  if (!written.path.empty()) files.push_back(written.path);
  while (files.size() > options_.keep_windows) {
    // Only files this writer wrote: a name is never reused while it exists.
    if (::unlink(files.front().c_str()) == 0) {
      spdlog::debug("removed {}: the newest {} windows of pid {} are kept", files.front(),
                    options_.keep_windows, work.key.pid);
    } else if (errno != ENOENT) {
      spdlog::warn("could not remove the old window profile {} ({}); it stays", files.front(),
                   std::strerror(errno));
    }
    files.pop_front();
  }
  if (work.last_window) window_files_.erase(process);  // its pid may be reused by another
}

}  // namespace cilkprof::aggregator::internal
