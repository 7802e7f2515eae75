// A file in memory (memfd) with a path, for harnesses of readers that take a path:
// rewritten in place for each input, so a fuzzer makes no file per execution.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>

namespace cilkprof::aggregator::fuzzing {

class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("cilkprof-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();  // a harness that cannot run must not pass
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Replaces the content with `bytes`.
  void Write(std::string_view bytes) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    for (size_t at = 0; at < bytes.size();) {
      const ssize_t n = ::pwrite(fd_, bytes.data() + at, bytes.size() - at, static_cast<off_t>(at));
      if (n <= 0) std::abort();
      at += static_cast<size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace cilkprof::aggregator::fuzzing
