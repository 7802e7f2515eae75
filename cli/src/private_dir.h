// A private temporary directory (mode 0700, from mkdtemp under $TMPDIR or /tmp) for
// the agents' socket and the files of a run, removed with what is left in it when the
// object goes.
#pragma once

#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::cli {

class PrivateDir {
 public:
  // Room is left in the path for "/agents.sock" within a Unix socket's 107 bytes.
  static Result<PrivateDir> Create();
  PrivateDir(PrivateDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  ~PrivateDir();
  const std::string& path() const { return path_; }

 private:
  explicit PrivateDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace cilkprof::cli
