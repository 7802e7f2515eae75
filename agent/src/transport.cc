#include "transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log.h"

namespace cilkprof::agent {
namespace {

constexpr int kConnectTimeoutSeconds = 2;

uint64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

// Connects a blocking socket with SO_SNDTIMEO as the connect deadline (honoured by
// both AF_UNIX and TCP connect), then makes it non-blocking.
bool ConnectWithTimeout(int fd, const sockaddr* addr, socklen_t len, std::string* why) {
  timeval tv{kConnectTimeoutSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  while (connect(fd, addr, len) != 0) {
    if (errno == EINTR) continue;
    *why = ErrnoText(errno);
    return false;
  }
  tv = timeval{0, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return true;
}

// The agent's descriptors live high in the table so that a program that assumes
// small descriptor numbers are its own is less likely to meet them.
int MoveHigh(int fd) {
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
  if (high < 0) return fd;
  close(fd);
  return high;
}

}  // namespace

void Transport::Configure(std::string address, std::string spill_dir, pid_t pid) {
  address_ = std::move(address);
  spill_dir_ = std::move(spill_dir);
  pid_ = pid;
  spill_path_ = spill_dir_ + "/cilkprof-" + std::to_string(pid) + ".spill";
}

bool Transport::Connect(std::string* why) {
  int fd = -1;
  if (address_.rfind("tcp:", 0) == 0) {
    const std::string rest = address_.substr(4);
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
      *why = "expected tcp:HOST:PORT";
      return false;
    }
    std::string host = rest.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const std::string port = rest.substr(colon + 1);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
    if (rc != 0) {
      *why = std::string("cannot resolve ") + host + ": " + gai_strerror(rc);
      return false;
    }
    for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
      fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (ConnectWithTimeout(fd, a->ai_addr, a->ai_addrlen, why)) break;
      close(fd);
      fd = -1;
    }
    freeaddrinfo(list);
    if (fd < 0) return false;
  } else {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (address_.size() >= sizeof addr.sun_path) {
      *why = "the socket path is longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
      return false;
    }
    std::memcpy(addr.sun_path, address_.c_str(), address_.size() + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *why = ErrnoText(errno);
      return false;
    }
    if (!ConnectWithTimeout(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr, why)) {
      close(fd);
      return false;
    }
  }
  fd_ = MoveHigh(fd);
  struct stat st;
  if (fstat(fd_, &st) == 0) {
    fd_dev_ = st.st_dev;
    fd_ino_ = st.st_ino;
  }
  return true;
}

void Transport::EnsureOpen() {
  if (opened_) return;
  opened_ = true;
  std::string why;
  if (!Connect(&why)) StartSpill("cannot connect to the aggregator at " + address_ + ": " + why);
}

bool Transport::SocketStillOurs() const {
  struct stat st;
  return fd_ >= 0 && fstat(fd_, &st) == 0 && st.st_dev == fd_dev_ && st.st_ino == fd_ino_;
}

void Transport::EnqueueHello(std::string frame) {
  hello_ = frame;
  if (spilling_) {
    WriteToSpill(hello_, 0);
    return;
  }
  queued_bytes_ += frame.size();
  queue_.push_back(Pending{std::move(frame), true});
}

void Transport::Enqueue(std::string frame) {
  if (spilling_) {
    WriteToSpill(frame, 0);
    return;
  }
  queued_bytes_ += frame.size();
  queue_.push_back(Pending{std::move(frame), false});
  if (queued_bytes_ > kMaxQueuedBytes) {
    StartSpill("the aggregator at " + address_ + " is not reading fast enough (" +
               std::to_string(queued_bytes_ >> 20) + " MiB queued)");
  }
}

void Transport::Pump() {
  if (spilling_ || !opened_) return;
  if (!queue_.empty() && !SocketStillOurs()) {
    fd_ = -1;  // the program closed it; the number may be the program's now
    StartSpill("the program closed the agent's connection to the aggregator");
    return;
  }
  while (!queue_.empty()) {
    const std::string& bytes = queue_.front().bytes;
    const ssize_t n = send(fd_, bytes.data() + front_offset_, bytes.size() - front_offset_,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      StartSpill("lost the connection to the aggregator at " + address_ + ": " + ErrnoText(errno));
      return;
    }
    front_offset_ += static_cast<size_t>(n);
    if (front_offset_ == bytes.size()) {
      if (!queue_.front().is_hello) delivered_data_ = true;
      queued_bytes_ -= bytes.size();
      queue_.pop_front();
      front_offset_ = 0;
    }
  }
}

void Transport::Drain(int timeout_ms) {
  const uint64_t deadline = MonotonicMs() + static_cast<uint64_t>(timeout_ms);
  Pump();
  while (has_pending()) {
    const uint64_t now = MonotonicMs();
    if (now >= deadline) {
      StartSpill("the aggregator at " + address_ + " did not take the last " +
                 std::to_string(queued_bytes_) + " bytes within " + std::to_string(timeout_ms) +
                 " ms");
      return;
    }
    pollfd p{fd_, POLLOUT, 0};
    const int rc = poll(&p, 1, static_cast<int>(deadline - now));
    if (rc < 0 && errno != EINTR) break;
    Pump();
  }
}

void Transport::StartSpill(const std::string& why) {
  if (spilling_) return;
  spilling_ = true;
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  // Never overwrite: after exec the same pid spills again, and an old file may be a
  // profile nobody has imported yet. cilkprof-<pid>.spill, then cilkprof-<pid>.1.spill...
  const std::string base = spill_dir_ + "/cilkprof-" + std::to_string(pid_);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    spill_path_ = attempt == 0 ? base + ".spill" : base + "." + std::to_string(attempt) + ".spill";
    spill_fd_ = open(spill_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (spill_fd_ >= 0 || errno != EEXIST) break;
  }
  if (spill_fd_ < 0) {
    spill_failed_ = true;
    LogLine(why + "; cannot write the spill file " + spill_path_ + " either (" +
            ErrnoText(errno) + "): the profile of process " + std::to_string(pid_) +
            " is lost. Set CILKPROF_SPILL_DIR to a writable directory.");
  } else {
    spill_fd_ = MoveHigh(spill_fd_);
    LogLine(why + "; writing the profile of process " + std::to_string(pid_) + " to " +
            spill_path_ + " (convert it with: cilkprof import " + spill_path_ + ")");
  }
  // The Hello first (even if the aggregator got it: the file must stand alone), then
  // every frame the aggregator has not received in full. A frame cut short on the
  // socket is useless to the aggregator, so it is written again whole.
  if (!hello_.empty()) WriteToSpill(hello_, 0);
  // The frames the aggregator did receive declared modules and nodes that the frames
  // below refer to: declare them all again (the aggregator accepts a node announced
  // again with the same parent, so the overlap with the frames below is harmless).
  if (delivered_data_ && redeclaration_) WriteToSpill(redeclaration_(), 0);
  for (const Pending& p : queue_) {
    if (!p.is_hello) WriteToSpill(p.bytes, 0);
  }
  queue_.clear();
  queued_bytes_ = 0;
  front_offset_ = 0;
}

void Transport::WriteToSpill(const std::string& bytes, size_t from) {
  if (spill_fd_ < 0) return;
  while (from < bytes.size()) {
    const ssize_t n = write(spill_fd_, bytes.data() + from, bytes.size() - from);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      LogLine("writing the spill file " + spill_path_ + " failed (" + ErrnoText(errno) +
              "): the profile is incomplete");
      close(spill_fd_);
      spill_fd_ = -1;
      return;
    }
    from += static_cast<size_t>(n);
  }
}

void Transport::Close() {
  if (fd_ >= 0 && SocketStillOurs()) close(fd_);
  if (spill_fd_ >= 0) close(spill_fd_);
  fd_ = spill_fd_ = -1;
  queue_.clear();
  queued_bytes_ = 0;
  front_offset_ = 0;
}

void Transport::Abandon() {
  // Our copy only: the parent's connection stays open.
  if (fd_ >= 0 && SocketStillOurs()) close(fd_);
  if (spill_fd_ >= 0) close(spill_fd_);
  fd_ = spill_fd_ = -1;
  queue_.clear();
  queued_bytes_ = 0;
  front_offset_ = 0;
  hello_.clear();
  opened_ = spilling_ = spill_failed_ = delivered_data_ = false;
}

}  // namespace cilkprof::agent
