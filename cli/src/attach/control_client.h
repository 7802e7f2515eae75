// The CLI's side of a standby agent's control socket (protocol and path:
// common/include/cilkprof/common/control_protocol.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::cli::attach {

// The control socket of process `pid`, as seen from here: through /proc/<pid>/root, so
// that a process with a private /tmp (systemd PrivateTmp=yes) is reached too. The
// directory is named after the process's effective uid (/proc/<pid>/status).
Result<std::string> ControlSocketOf(pid_t pid);

// A connection to a control socket.
class ControlConnection {
 public:
  // Connects; checks that the listener is process `pid` itself (SO_PEERCRED), not
  // another process that took the path.
  static Result<ControlConnection> Open(const std::string& path, pid_t pid);
  ControlConnection(ControlConnection&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ControlConnection& operator=(ControlConnection&&) = delete;
  ControlConnection(const ControlConnection&) = delete;
  ~ControlConnection();

  // Sends one request line, with `pass_fd` in SCM_RIGHTS when it is >= 0.
  Status Send(const std::string& line, int pass_fd = -1);
  // One reply line (without the newline), waiting at most `timeout`. An error when the
  // agent closed the connection (`closed` set then) or the time ran out.
  Result<std::string> ReadLine(std::chrono::milliseconds timeout, bool* closed = nullptr);
  int fd() const { return fd_; }

 private:
  explicit ControlConnection(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffered_;
};

}  // namespace cilkprof::cli::attach
