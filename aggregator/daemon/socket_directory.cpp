// The directory of cilkprofd's default socket (see socket_directory.h).
#include "socket_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cilkprof::daemon {
namespace {

std::string ParentOf(const std::string& dir) {
  const size_t slash = dir.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : dir.substr(0, slash);
}

constexpr const char* kAlternatives =
    "set XDG_RUNTIME_DIR to your own runtime directory, or pass --socket with a path in a "
    "directory only you can write to";

// Someone else could rename `dir` out of `parent` and put theirs in its place.
Status CheckParent(const std::string& parent, uid_t uid) {
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0) {
    return Status::Error(fmt::format("cannot inspect {} ({}); {}", parent, std::strerror(errno),
                                     kAlternatives));
  }
  if (st.st_uid != uid && st.st_uid != 0) {
    return Status::Error(fmt::format(
        "{} belongs to uid {}, not to you (uid {}) or root (an XDG_RUNTIME_DIR inherited "
        "through sudo or su?); {}",
        parent, st.st_uid, uid, kAlternatives));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return Status::Error(fmt::format(
        "{} is writable by other users and has no sticky bit (mode {:o}): they could replace "
        "the socket's directory; {}",
        parent, st.st_mode & 07777, kAlternatives));
  }
  return Status::Ok();
}

}  // namespace

std::string DefaultSocketDirectory() {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  if (runtime_dir != nullptr && runtime_dir[0] == '/') {
    return std::string(runtime_dir) + "/cilkprof";
  }
  return fmt::format("/tmp/cilkprof-{}", ::geteuid());
}

Status PreparePrivateDirectory(const std::string& dir) {
  const uid_t uid = ::geteuid();
  CILKPROF_RETURN_IF_ERROR(CheckParent(ParentOf(dir), uid));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Error(fmt::format("cannot create the socket directory {} ({}); {}", dir,
                                     std::strerror(errno), kAlternatives));
  }
  // Checked through a descriptor of the directory itself (O_NOFOLLOW: not a link to
  // somewhere else); lstat first only to say what it is instead.
  struct stat link {};
  const bool is_link = ::lstat(dir.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  const int fd = is_link ? -1 : ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = is_link ? ELOOP : errno;
    return Status::Error(fmt::format(
        "the socket directory {} {}; someone may have put it there to intercept your "
        "profiles: remove it, or {}",
        dir,
        err == ELOOP ? "is a symbolic link"
        : err == ENOTDIR ? "is not a directory"
                         : fmt::format("cannot be opened ({})", std::strerror(err)),
        kAlternatives));
  }
  struct stat st {};
  const int stat_result = ::fstat(fd, &st);
  ::close(fd);
  if (stat_result != 0) {
    return Status::Error(fmt::format("cannot inspect the socket directory {} ({})", dir,
                                     std::strerror(errno)));
  }
  if (st.st_uid != uid) {
    return Status::Error(fmt::format(
        "the socket directory {} belongs to uid {}, not to you (uid {}): another user created "
        "it, perhaps to intercept your profiles; have it removed (by root), or {}",
        dir, st.st_uid, uid, kAlternatives));
  }
  if ((st.st_mode & 07777) != 0700) {
    return Status::Error(fmt::format(
        "the socket directory {} has mode {:o}; it must be 700 so that no one else can reach "
        "your socket: run 'chmod 700 {}'",
        dir, st.st_mode & 07777, dir));
  }
  return Status::Ok();
}

}  // namespace cilkprof::daemon
