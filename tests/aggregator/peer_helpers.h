// Helpers for the aggregator's trust and limit tests: the TCP shared secret, TCP
// clients, and waiting for the server's counters to reach a state.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace cilkprof::aggregator::testing {

// 256 bits as hex, the length `openssl rand -hex 32` gives.
inline const std::string kTestToken =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// Writes `token` to `path` with `mode`; false on failure.
inline bool WriteSecretFile(const std::string& path, const std::string& token = kTestToken,
                            mode_t mode = 0600) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string text = token + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return written && ::chmod(path.c_str(), mode) == 0;
}

// The line a TCP client sends before its first frame.
inline std::string AuthLine(const std::string& token = kTestToken) {
  return "CILKPROF-AUTH " + token + "\n";
}

// A connected TCP socket to 127.0.0.1:port, or -1.
inline int ConnectTcp(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Polls `done` until it holds; false if it still does not after a minute. For states
// the server reaches on its own (a connection registered, a counter raised): the
// limit only keeps a broken server from hanging the test, no assertion depends on it.
inline bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace cilkprof::aggregator::testing
