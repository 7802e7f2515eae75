// Atomic profile writes: temporary file in the target directory, fsync, rename (or a
// no-replace rename), fsync of the directory. A crash at any point leaves either the
// old state or the complete new file at `path`, plus at worst a stray temporary
// ".NAME.tmp-XXXXXX" that no reader mistakes for a profile.
//
// Safety of what is already there: only a regular file is ever replaced. The target
// is checked with lstat (links are not followed) before anything is written and again
// just before the rename; a device, FIFO, socket, directory or symbolic link is left
// alone and reported. Nothing at `path` is ever opened, so a FIFO or device planted
// there cannot block or receive the profile. The temporary file is created with
// O_CREAT|O_EXCL (mkostemp), which never follows a symbolic link planted at its name,
// and with mode 0600: profiles hold the program's argv, environment-derived paths
// and source paths. What remains is the moment between the last check and the
// rename: only someone who may write to the directory can use it, and they could
// replace the file themselves.
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

const char* KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Status NotReplaced(const std::string& path, const std::string& kind) {
  return Status::Error(fmt::format(
      "{}: not replaced: it is {}, not a regular file (a profile only ever replaces a regular file); "
      "give the name of a regular file or of a new one",
      path, kind));
}

// With Replace::kYes: fine when nothing or a regular file is at `path`.
Status CheckTarget(const std::string& path, Replace replace) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Status::Ok();  // absent; other errors show at the rename
  if (replace == Replace::kNo) {
    return Status::Error(fmt::format("already exists: {} (not overwritten)", path));
  }
  if (!S_ISREG(st.st_mode)) return NotReplaced(path, KindOf(st.st_mode));
  return Status::Ok();
}

void SyncDirectory(const std::string& dir) {
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

// Moves tmp to path; with Replace::kNo fails with EEXIST when path exists. With
// Replace::kYes, only over a regular file (checked last thing before the rename).
Status RenameInto(const std::string& tmp, const std::string& path, Replace replace, const char* advice) {
  int rc = -1;
  if (replace == Replace::kYes) {
    if (Status target = CheckTarget(path, replace); !target.ok()) return target;
    rc = ::rename(tmp.c_str(), path.c_str());
  } else {
#ifdef RENAME_NOREPLACE
    rc = ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno != EINVAL && errno != ENOSYS) rc = -2;  // a real failure: keep its errno
#endif
    if (rc == -1) {
      // File systems without RENAME_NOREPLACE: link() never replaces either.
      rc = ::link(tmp.c_str(), path.c_str());
      if (rc == 0) ::unlink(tmp.c_str());
    }
  }
  if (rc == 0) return Status::Ok();
  if (errno == EEXIST) return Status::Error(fmt::format("already exists: {} (not overwritten)", path));
  return Errno(path, "cannot move the finished file into place", errno, advice);
}

Status WriteAtomically(const std::string& path, const profile::Profile& profile,
                       Replace replace) {
  const std::string dir = DirectoryOf(path);
  const std::string base = BaseOf(path);
  if (base.empty()) {
    return Status::Error(fmt::format("{}: names a directory; give a file name", path));
  }
  const char* advice = "check that the directory exists and is writable, and that the disk has space";
  if (Status target = CheckTarget(path, replace); !target.ok()) return target;
  std::string tmp = (dir == "." && path.find('/') == std::string::npos ? "" : dir + "/") + "." +
                    base + ".tmp-XXXXXX";
  // O_CREAT|O_EXCL, mode 0600 (see the top of the file).
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return Errno(path, "cannot create a temporary file next to it", errno, advice);
  const std::string bytes = EncodeProfileFile(profile);
  Status status = WriteAll(fd, bytes);
  if (status.ok() && ::fsync(fd) != 0) status = Status::Error(std::strerror(errno));
  if (::close(fd) != 0 && status.ok()) status = Status::Error(std::strerror(errno));
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return Status::Error(fmt::format("{}: write failed ({}); {}", path, status.message(), advice));
  }
  if (Status moved = RenameInto(tmp, path, replace, advice); !moved.ok()) {
    ::unlink(tmp.c_str());
    return moved;
  }
  SyncDirectory(dir);  // make the rename itself durable
  return Status::Ok();
}

}  // namespace

std::string NonRegularFileKind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  return KindOf(st.st_mode);
}

Status WriteProfileFile(const std::string& path, const profile::Profile& profile) {
  return WriteAtomically(path, profile, Replace::kYes);
}

Status WriteNewProfileFile(const std::string& path, const profile::Profile& profile) {
  return WriteAtomically(path, profile, Replace::kNo);
}

Status MoveProfileFile(const std::string& from, const std::string& to) {
  if (Status moved = RenameInto(from, to, Replace::kYes, "check that the directory is writable"); !moved.ok()) {
    return moved;
  }
  SyncDirectory(DirectoryOf(to));
  return Status::Ok();
}

}  // namespace cilkprof::aggregator
