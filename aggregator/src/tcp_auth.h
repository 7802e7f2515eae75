// Authentication of agent connections over TCP (internal to the server; see
// docs/SECURITY.md, "TCP").
//
// The aggregator and its agents share a secret token, kept in a file only its owner
// can read. Before its first frame, a TCP client sends one line:
//
//   CILKPROF-AUTH <token as hex>\n
//
// and the aggregator compares the token in constant time. Nothing is answered: a
// client with a wrong or missing token sees its connection closed. Unix-socket
// clients send no such line (the kernel tells who they are). The token is not
// encrypted on the wire: TCP is for trusted networks, the token keeps out the other
// users of the hosts on it, not an eavesdropper.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "cilkprof/common/status.h"

namespace cilkprof::aggregator::internal {

inline constexpr std::string_view kAuthPrefix = "CILKPROF-AUTH ";
// 128 bits at least; 256 hex digits (1024 bits) at most.
inline constexpr size_t kMinTokenHexDigits = 32;
inline constexpr size_t kMaxTokenHexDigits = 256;
inline constexpr size_t kMaxAuthLineBytes = kAuthPrefix.size() + kMaxTokenHexDigits + 1;

// Compares without an early exit, so the time taken does not tell how much of a
// guess was right. Lengths are not secret (the file's token length is not).
inline bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// A token as hex digits, lower case; empty if `text` is not 32 to 256 hex digits.
inline std::string NormalizeToken(std::string_view text) {
  if (text.size() < kMinTokenHexDigits || text.size() > kMaxTokenHexDigits) return "";
  std::string token;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    token.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return token;
}

// Reads the shared secret: a regular file (not a symlink) owned by the aggregator's
// user or root, readable and writable by its owner only, holding 32 to 256 hex digits
// (surrounding whitespace ignored). Create one with
//   (umask 077; openssl rand -hex 32 > FILE)
inline Result<std::string> LoadTcpSecret(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    return Status::Error(fmt::format(
        "cannot open the TCP secret file {} ({}); create it with "
        "'(umask 077; openssl rand -hex 32 > {})'",
        path, err == ELOOP ? "it is a symbolic link" : std::strerror(err), path));
  }
  struct stat st {};
  std::string text;
  Status status;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = Status::Error(fmt::format("the TCP secret file {} is not a regular file", path));
  } else if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    status = Status::Error(fmt::format(
        "the TCP secret file {} belongs to uid {}, not to you (uid {}) or root; use a file of "
        "your own",
        path, st.st_uid, ::geteuid()));
  } else if ((st.st_mode & 077) != 0) {
    status = Status::Error(fmt::format(
        "the TCP secret file {} is readable or writable by others (mode {:03o}); run 'chmod 600 "
        "{}'",
        path, st.st_mode & 0777, path));
  } else {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0 && text.size() < 4096) {
      text.append(buffer, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  const size_t begin = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  const std::string token =
      begin == std::string::npos ? "" : NormalizeToken(std::string_view(text).substr(begin, end - begin + 1));
  if (token.empty()) {
    return Status::Error(fmt::format(
        "the TCP secret file {} must hold one token of 32 to 256 hex digits; create it with "
        "'(umask 077; openssl rand -hex 32 > {})'",
        path, path));
  }
  return token;
}

// The client's authentication line, taken in pieces as they arrive.
class AuthPreamble {
 public:
  // Takes bytes from the start of what the client sent (which the caller has only
  // peeked at) and returns how many of them belong to the line: up to and including
  // its newline. The caller consumes exactly those; what follows is the frame stream.
  size_t Offer(std::string_view peeked) {
    const size_t newline = peeked.find('\n');
    const size_t take = newline == std::string_view::npos ? peeked.size() : newline + 1;
    if (line_.size() + take > kMaxAuthLineBytes) {
      too_long_ = true;
      return take;
    }
    line_.append(peeked.substr(0, take));
    complete_ = newline != std::string_view::npos;
    return take;
  }
  // The line has ended, or is too long to be one.
  bool done() const { return complete_ || too_long_; }

  // Whether the line carries `token` (NormalizeToken'ed). Call once done().
  Status Verify(const std::string& token) const {
    if (!complete_) {
      return Status::Error(fmt::format(
          "no authentication line in its first {} bytes (TCP clients must first send "
          "\"CILKPROF-AUTH <token>\\n\")",
          kMaxAuthLineBytes));
    }
    std::string_view line(line_);
    line.remove_suffix(1);  // the newline
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, kAuthPrefix.size()) != kAuthPrefix) {
      return Status::Error(
          "it did not start with an authentication line (\"CILKPROF-AUTH <token>\\n\"); is it "
          "an agent without the shared secret?");
    }
    const std::string presented = NormalizeToken(line.substr(kAuthPrefix.size()));
    if (!ConstantTimeEquals(presented, token)) {
      return Status::Error("it presented a wrong token");
    }
    return Status::Ok();
  }

 private:
  std::string line_;
  bool complete_ = false;
  bool too_long_ = false;
};

}  // namespace cilkprof::aggregator::internal
