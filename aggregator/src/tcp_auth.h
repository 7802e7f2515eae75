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

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "cilkprof/common/status.h"
#include "cilkprof/common/tcp_secret.h"

namespace cilkprof::aggregator::internal {

using ::cilkprof::kAuthPrefix;
using ::cilkprof::kMaxAuthLineBytes;
using ::cilkprof::kMaxTokenHexDigits;
using ::cilkprof::kMinTokenHexDigits;
using ::cilkprof::NormalizeToken;

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

// Reads the shared secret with the checks agents apply too (common/tcp_secret.h): a
// regular file (not a symlink) owned by the aggregator's user or root, readable and
// writable by its owner only, holding 32 to 256 hex digits (surrounding whitespace
// ignored). Create one with
//   (umask 077; openssl rand -hex 32 > FILE)
inline Result<std::string> LoadTcpSecret(const std::string& path) {
  TcpSecret secret = ReadTcpSecretFile(path);
  switch (secret.problem) {
    case TcpSecret::Problem::kNone:
      return std::move(secret.token);
    case TcpSecret::Problem::kCannotOpen:
    case TcpSecret::Problem::kBadToken:
      return Status::Error(fmt::format("{}; create it with '(umask 077; openssl rand -hex 32 > {})'",
                                       secret.error, path));
    default:
      return Status::Error(secret.error);
  }
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
