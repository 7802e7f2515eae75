// Atomic profile writes: temporary file in the target directory, fsync, rename (or a
// no-replace rename), fsync of the directory. A crash at any point leaves either the
// old state or the complete new file at `path`, plus at worst a stray temporary
// ".NAME.tmp-XXXXXX" that no reader mistakes for a profile.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cilkprof/aggregator/profile_io.h"

namespace cilkprof::aggregator {
namespace {

enum class Replace { kYes, kNo };

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status Errno(const std::string& path, const char* what, int err, const char* advice) {
  return Status::Error(fmt::format("{}: {} ({}); {}", path, what, std::strerror(err), advice));
}

Status WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Moves tmp to path; with Replace::kNo fails with EEXIST when path exists.
int RenameInto(const std::string& tmp, const std::string& path, Replace replace) {
  if (replace == Replace::kYes) return ::rename(tmp.c_str(), path.c_str());
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
  // File systems without RENAME_NOREPLACE: link() never replaces either.
  if (::link(tmp.c_str(), path.c_str()) != 0) return -1;
  ::unlink(tmp.c_str());
  return 0;
}

Status WriteAtomically(const std::string& path, const profile::Profile& profile,
                       Replace replace) {
  const std::string dir = DirectoryOf(path);
  const std::string base = BaseOf(path);
  if (base.empty()) {
    return Status::Error(fmt::format("{}: names a directory; give a file name", path));
  }
  const char* advice = "check that the directory exists and is writable, and that the disk has space";
  if (replace == Replace::kNo && ::access(path.c_str(), F_OK) == 0) {
    return Status::Error(fmt::format("already exists: {} (not overwritten)", path));
  }
  std::string tmp = (dir == "." && path.find('/') == std::string::npos ? "" : dir + "/") + "." +
                    base + ".tmp-XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return Errno(path, "cannot create a temporary file next to it", errno, advice);
  // mkostemp creates 0600; profiles are ordinary user files.
  ::fchmod(fd, 0644);
  const std::string bytes = EncodeProfileFile(profile);
  Status status = WriteAll(fd, bytes);
  if (status.ok() && ::fsync(fd) != 0) status = Status::Error(std::strerror(errno));
  if (::close(fd) != 0 && status.ok()) status = Status::Error(std::strerror(errno));
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return Status::Error(fmt::format("{}: write failed ({}); {}", path, status.message(), advice));
  }
  if (RenameInto(tmp, path, replace) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    if (err == EEXIST) {
      return Status::Error(fmt::format("already exists: {} (not overwritten)", path));
    }
    return Errno(path, "cannot move the finished file into place", err, advice);
  }
  // Make the rename itself durable.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::Ok();
}

}  // namespace

Status WriteProfileFile(const std::string& path, const profile::Profile& profile) {
  return WriteAtomically(path, profile, Replace::kYes);
}

Status WriteNewProfileFile(const std::string& path, const profile::Profile& profile) {
  return WriteAtomically(path, profile, Replace::kNo);
}

}  // namespace cilkprof::aggregator
