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

#include "cilkprof/common/tcp_secret.h"
#include "log.h"
#include "stream_format.h"

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

// Appends `text` to the NUL-terminated `buf` of `size` bytes. Async-signal-safe.
void AppendText(char* buf, size_t size, const char* text) {
  size_t used = strnlen(buf, size);
  while (*text != '\0' && used + 1 < size) buf[used++] = *text++;
  buf[used < size ? used : size - 1] = '\0';
}

void AppendDecimal(char* buf, size_t size, uint64_t value) {
  char digits[24];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  char text[24];
  for (size_t i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = '\0';
  AppendText(buf, size, text);
}

// Writes all of it, retrying after EINTR. Async-signal-safe.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Sends all of it on a non-blocking socket, waiting for room until deadline_ms.
// Async-signal-safe.
bool SendAll(int fd, const char* data, size_t size, uint64_t deadline_ms) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const uint64_t now = MonotonicMs();
      if (now >= deadline_ms) return false;
      pollfd p{fd, POLLOUT, 0};
      const int waited = static_cast<int>(deadline_ms - now);
      if (poll(&p, 1, waited) < 0 && errno != EINTR) return false;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

void Transport::Configure(std::string address, std::string spill_dir, pid_t pid) {
  address_ = std::move(address);
  spill_dir_ = std::move(spill_dir);
  pid_ = pid;
  spill_path_ = spill_dir_ + "/cilkprof-" + std::to_string(pid) + ".spill";
}

void Transport::AdoptConnection(int fd, pid_t pid) {
  Abandon();
  address_ = "the connection cilkprof attach handed over";
  spill_dir_.clear();
  pid_ = pid;
  fd_ = MoveHigh(fd);
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  struct stat st;
  if (fstat(fd_, &st) == 0) {
    fd_dev_ = st.st_dev;
    fd_ino_ = st.st_ino;
  }
  opened_ = true;
  handed_ = true;
}

void Transport::SetTcpToken(std::string token, std::string problem) {
  tcp_token_ = std::move(token);
  tcp_problem_ = std::move(problem);
}

bool Transport::IsTcp() const { return address_.rfind("tcp:", 0) == 0; }

bool Transport::Connect(std::string* why) {
  int fd = -1;
  if (IsTcp()) {
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

// The listener's credentials, as the kernel recorded them when it called listen():
// whoever created the socket path cannot fake them.
bool Transport::PeerIsTrusted(std::string* why) const {
  if (IsTcp()) return true;  // no credentials on TCP: the agent authenticates itself
  ucred peer{};
  socklen_t len = sizeof peer;
  if (getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    *why = "cannot read the credentials of the aggregator at " + address_ + " (" + ErrnoText(errno) +
           "), so it may be anyone's: it gets nothing";
    return false;
  }
  if (peer.uid == 0 || peer.uid == getuid() || peer.uid == geteuid()) return true;
  *why = "the aggregator at " + address_ + " runs as uid " + std::to_string(peer.uid) +
         ", not as you (uid " + std::to_string(geteuid()) +
         ") or root, so it gets nothing of this process (its arguments and paths are yours)";
  return false;
}

void Transport::EnsureOpen() {
  if (opened_) return;
  opened_ = true;
  std::string why;
  if (IsTcp() && tcp_token_.empty()) {
    // The daemon would refuse the connection after reading our first bytes: do not
    // even send them (the Hello holds argv).
    StartSpill("not streaming to the aggregator at " + address_ + ": " +
               (tcp_problem_.empty() ? std::string("no TCP secret") : tcp_problem_));
    return;
  }
  if (!Connect(&why)) {
    StartSpill("cannot connect to the aggregator at " + address_ + ": " + why);
    return;
  }
  if (!PeerIsTrusted(&why)) {
    close(fd_);
    fd_ = -1;
    StartSpill(why, /*respect_quiet=*/true);
    return;
  }
  if (IsTcp()) auth_line_ = AuthLine(tcp_token_);
}

bool Transport::SocketStillOurs() const {
  struct stat st;
  return fd_ >= 0 && fstat(fd_, &st) == 0 && st.st_dev == fd_dev_ && st.st_ino == fd_ino_;
}

void Transport::Push(std::string frame, Kind kind) {
  queued_bytes_ += frame.size();
  queue_.push_back(Pending{std::move(frame), kind});
  if (queued_bytes_ > kMaxQueuedBytes) {
    StartSpill("the aggregator at " + address_ + " is not reading fast enough (" +
               std::to_string(queued_bytes_ >> 20) + " MiB queued)");
  }
}

void Transport::EnqueueHello(std::string frame) {
  hello_ = SealFrames(frame);
  if (spilling_) {
    WriteToSpill(hello_);
    return;
  }
  // The stream's magic opens the connection, just before its first frame; on TCP the
  // authentication line comes first, in the same send(), so that a daemon that refuses
  // it closes with our data unread, which resets the connection (TcpStreamTaken).
  Push(auth_line_ + std::string(kStreamMagic, sizeof kStreamMagic) + hello_, Kind::kHello);
  auth_line_.clear();
}

void Transport::Enqueue(std::string frame) {
  if (spilling_) {
    WriteToSpill(SealFrames(frame));
    return;
  }
  Push(SealFrames(frame), Kind::kData);
}

void Transport::EnqueueGoodbye(std::string frame) {
  if (spilling_) {
    WriteToSpill(SealFrames(frame));
    return;
  }
  goodbye_ = SealFrames(frame);
  Push(goodbye_, Kind::kGoodbye);
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
  if (IsTcp() && !spilling_ && fd_ >= 0 && queue_.empty() && SocketStillOurs()) {
    std::string why;
    if (!TcpStreamTaken(deadline, &why)) StartSpill(why);
  }
}

// The daemon never writes to an agent. It closes a connection it accepted after reading
// its end, and one it refused (a wrong token) or dropped as soon as it decided, with our
// frames unread, which resets the connection. So, once our end is shut: end of stream
// means taken; a reset, or nothing before the deadline, means it may not have been.
bool Transport::TcpStreamTaken(uint64_t deadline_ms, std::string* why) {
  if (shutdown(fd_, SHUT_WR) != 0) {
    *why = "lost the connection to the aggregator at " + address_ + ": " + ErrnoText(errno);
    return false;
  }
  for (;;) {
    char ignored[256];
    const ssize_t n = recv(fd_, ignored, sizeof ignored, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n > 0) continue;  // not cilkprofd's behaviour; what matters is how it ends
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *why = "the aggregator at " + address_ + " reset the connection (" + ErrnoText(errno) +
             "): it refused this agent's TCP secret or dropped the connection (its log says "
             "which), so it may not have the profile";
      return false;
    }
    const uint64_t now = MonotonicMs();
    if (now >= deadline_ms) {
      *why = "the aggregator at " + address_ + " did not confirm, by closing the connection, that it "
             "took the profile";
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(deadline_ms - now)) < 0 && errno != EINTR) {
      *why = "cannot wait for the aggregator at " + address_ + ": " + ErrnoText(errno);
      return false;
    }
  }
}

int Transport::OpenSpillFile(char* path, size_t path_size) {
  // Never overwrite: after exec the same pid spills again, and an old file may be a
  // profile nobody has imported yet. cilkprof-<pid>.spill, then cilkprof-<pid>.1.spill...
  int fd = -1;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    path[0] = '\0';
    AppendText(path, path_size, spill_dir_.c_str());
    AppendText(path, path_size, "/cilkprof-");
    AppendDecimal(path, path_size, static_cast<uint64_t>(pid_));
    if (attempt > 0) {
      AppendText(path, path_size, ".");
      AppendDecimal(path, path_size, static_cast<uint64_t>(attempt));
    }
    AppendText(path, path_size, ".spill");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 || errno != EEXIST) break;
  }
  if (fd < 0) return -1;
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
  if (high >= 0) {
    close(fd);
    fd = high;
  }
  return fd;
}

void Transport::StartSpill(const std::string& why, bool respect_quiet) {
  if (spilling_) return;
  if (handed_) {
    // Attached: nothing goes to a file (AdoptConnection). The agent detaches.
    spilling_ = true;
    lost_ = true;
    lost_reason_ = why;
    if (fd_ >= 0 && SocketStillOurs()) close(fd_);
    fd_ = -1;
    queue_.clear();
    queued_bytes_ = 0;
    front_offset_ = 0;
    return;
  }
  spilling_ = true;
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  char path[PATH_MAX];
  spill_fd_ = OpenSpillFile(path, sizeof path);
  const int open_errno = errno;
  spill_path_ = path;
  std::string line;
  if (spill_fd_ < 0) {
    spill_failed_ = true;
    line = why + "; cannot write the spill file " + spill_path_ + " either (" + ErrnoText(open_errno) +
           "): the profile of process " + std::to_string(pid_) +
           " is lost. Set CILKPROF_SPILL_DIR to a writable directory.";
  } else {
    line = why + "; writing the profile of process " + std::to_string(pid_) + " to " + spill_path_ +
           " (convert it with: cilkprof import " + spill_path_ + ")";
  }
  if (respect_quiet) {
    LogInfo(line);
  } else {
    LogLine(line);
  }
  WriteToSpill(std::string(kStreamMagic, sizeof kStreamMagic));
  if (!hello_.empty()) {
    // The Hello, then everything recorded so far (the frames the aggregator received,
    // and those it did not, are all in it), then a Goodbye that was waiting. The data
    // frames still queued are part of the snapshot and are dropped.
    WriteToSpill(hello_);
    if (snapshot_) WriteToSpill(SealFrames(snapshot_()));
    // The Goodbye, queued or already sent (a TCP daemon that refused it, TcpStreamTaken).
    if (!goodbye_.empty()) WriteToSpill(goodbye_);
  }
  queue_.clear();
  queued_bytes_ = 0;
  front_offset_ = 0;
}

void Transport::WriteToSpill(const std::string& bytes) {
  if (spill_fd_ < 0) return;
  if (!WriteAll(spill_fd_, bytes.data(), bytes.size())) {
    LogLine("writing the spill file " + spill_path_ + " failed (" + ErrnoText(errno) +
            "): the profile is incomplete");
    close(spill_fd_);
    spill_fd_ = -1;
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
  goodbye_.clear();
  auth_line_.clear();
  opened_ = spilling_ = spill_failed_ = false;
  handed_ = lost_ = false;
  lost_reason_.clear();
}

// ---- The crash path ------------------------------------------------------------------

Transport::Route Transport::CrashRoute() const {
  if (hello_.empty()) return Route::kNowhere;
  if (spilling_) return spill_fd_ >= 0 ? Route::kSpill : Route::kNowhere;
  return fd_ >= 0 && SocketStillOurs() ? Route::kSocket : Route::kNowhere;
}

bool Transport::CrashSendQueued(uint64_t deadline_ms) {
  size_t offset = front_offset_;
  for (const Pending& p : queue_) {
    if (!SendAll(fd_, p.bytes.data() + offset, p.bytes.size() - offset, deadline_ms)) return false;
    offset = 0;
  }
  return true;
}

bool Transport::CrashWrite(const char* data, size_t size, uint64_t deadline_ms) {
  if (spilling_) return spill_fd_ >= 0 && WriteAll(spill_fd_, data, size);
  return fd_ >= 0 && SendAll(fd_, data, size, deadline_ms);
}

bool Transport::CrashStartSpill() {
  if (handed_) return false;  // attached: never a file in the program's directories
  if (fd_ >= 0 && SocketStillOurs()) close(fd_);
  fd_ = -1;
  spilling_ = true;  // from here on CrashWrite goes to the file
  if (spill_fd_ >= 0) close(spill_fd_);
  spill_fd_ = OpenSpillFile(crash_spill_path_, sizeof crash_spill_path_);
  if (spill_fd_ < 0) return false;
  return WriteAll(spill_fd_, kStreamMagic, sizeof kStreamMagic) &&
         WriteAll(spill_fd_, hello_.data(), hello_.size());
}

}  // namespace cilkprof::agent
