#include "attach/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cilkprof/common/control_protocol.h"
#include "inject/target_process.h"

namespace cilkprof::cli::attach {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

}  // namespace

Result<std::string> ControlSocketOf(pid_t pid) {
  auto status = inject::ReadProcessStatus(pid);
  if (!status.ok()) return Status::Error("no process " + std::to_string(pid) + " (check the PID with ps)");
  const uid_t effective = status->uids[1];
  return "/proc/" + std::to_string(pid) + "/root" + control::SocketPath(effective, pid);
}

Result<ControlConnection> ControlConnection::Open(const std::string& path, pid_t pid) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Status::Error("the control socket path " + path + " is too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error("socket: " + ErrnoText(errno));
  ControlConnection connection(fd);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int error = errno;
    if (error == ENOENT) return Status::Error("no control socket at " + path);
    if (error == ECONNREFUSED) return Status::Error("nothing listens on " + path + " (a stale socket)");
    return Status::Error("cannot connect to " + path + ": " + ErrnoText(error));
  }
  ucred peer{};
  socklen_t len = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.pid != pid) {
    return Status::Error("the control socket " + path + " belongs to process " + std::to_string(peer.pid) +
                         ", not to " + std::to_string(pid));
  }
  return connection;
}

ControlConnection::~ControlConnection() {
  if (fd_ >= 0) close(fd_);
}

Status ControlConnection::Send(const std::string& line, int pass_fd) {
  iovec iov{const_cast<char*>(line.data()), line.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (pass_fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof pass_fd);
  }
  for (;;) {
    const ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(line.size())) return Status::Ok();
    if (n < 0 && errno == EINTR) continue;
    return Status::Error("cannot send to the agent's control socket: " +
                         (n < 0 ? ErrnoText(errno) : std::string("short write")));
  }
}

Result<std::string> ControlConnection::ReadLine(std::chrono::milliseconds timeout, bool* closed) {
  if (closed != nullptr) *closed = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (buffered_.find('\n') == std::string::npos) {
    if (buffered_.size() > control::kMaxLineBytes) return Status::Error("the agent's reply is too long");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::Error("the agent did not answer within " + std::to_string(timeout.count() / 1000) + " s");
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      return Status::Error("poll: " + ErrnoText(errno));
    }
    if (p.revents == 0) continue;
    char buf[512];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (closed != nullptr) *closed = true;
      return Status::Error("the agent closed the control connection");
    }
    buffered_.append(buf, static_cast<size_t>(n));
  }
  const size_t newline = buffered_.find('\n');
  std::string line = buffered_.substr(0, newline);
  buffered_.erase(0, newline + 1);
  return line;
}

}  // namespace cilkprof::cli::attach
