// The shared secret of TCP connections between agents and the aggregator: its file,
// its token and the line that presents it (docs/SECURITY.md, "TCP").
//
// Both ends read the secret with ReadTcpSecretFile, so an agent accepts exactly the
// files the daemon accepts. Header-only, with no fmt and no Status: the preloaded agent
// includes it too (it links nothing but libc and libstdc++). Not signal-safe
// (allocates); read once at start-up.
//
// Before its first frame a TCP client sends one line,
//
//   CILKPROF-AUTH <token as hex>\n
//
// which the aggregator checks (aggregator/src/tcp_auth.h).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace cilkprof {

inline constexpr std::string_view kAuthPrefix = "CILKPROF-AUTH ";
// 128 bits at least; 256 hex digits (1024 bits) at most.
inline constexpr size_t kMinTokenHexDigits = 32;
inline constexpr size_t kMaxTokenHexDigits = 256;
inline constexpr size_t kMaxAuthLineBytes = kAuthPrefix.size() + kMaxTokenHexDigits + 1;

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

// The line a TCP client sends first, for a NormalizeToken'ed token.
inline std::string AuthLine(const std::string& token) {
  return std::string(kAuthPrefix) + token + "\n";
}

struct TcpSecret {
  // What was wrong, for the message each end phrases around it. kNone: `token` holds
  // the token (NormalizeToken'ed).
  enum class Problem { kNone, kCannotOpen, kNotRegular, kNotOwned, kTooOpen, kBadToken };
  Problem problem = Problem::kNone;
  std::string token;
  // Empty when problem is kNone; else one sentence naming the file and what is wrong,
  // with the fix when it does not depend on who reads the file (chmod, ownership).
  std::string error;
};

// Reads the shared secret: a regular file (not a symlink) owned by the effective user
// or root, readable and writable by its owner only (mode 600 or 400), holding 32 to 256
// hex digits (surrounding whitespace ignored).
inline TcpSecret ReadTcpSecretFile(const std::string& path) {
  TcpSecret secret;
  auto fail = [&secret](TcpSecret::Problem problem, std::string error) {
    secret.problem = problem;
    secret.error = std::move(error);
    return secret;
  };
  // O_NONBLOCK: a FIFO planted at the path must not hang the reader in open().
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    return fail(TcpSecret::Problem::kCannotOpen,
                "cannot open the TCP secret file " + path + " (" +
                    (err == ELOOP ? std::string("it is a symbolic link") : std::strerror(err)) +
                    ")");
  }
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(TcpSecret::Problem::kNotRegular,
                "the TCP secret file " + path + " is not a regular file");
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    ::close(fd);
    return fail(TcpSecret::Problem::kNotOwned,
                "the TCP secret file " + path + " belongs to uid " + std::to_string(st.st_uid) +
                    ", not to you (uid " + std::to_string(::geteuid()) +
                    ") or root; use a file of your own");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return fail(TcpSecret::Problem::kTooOpen, "the TCP secret file " + path +
                                                  " is readable or writable by others (mode " +
                                                  mode + "); run 'chmod 600 " + path + "'");
  }
  char buffer[4096];
  ssize_t n;
  while (text.size() < 4096 && (n = ::read(fd, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t begin = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  secret.token = begin == std::string::npos
                     ? ""
                     : NormalizeToken(std::string_view(text).substr(begin, end - begin + 1));
  if (secret.token.empty()) {
    return fail(TcpSecret::Problem::kBadToken,
                "the TCP secret file " + path + " must hold one token of 32 to 256 hex digits");
  }
  return secret;
}

}  // namespace cilkprof
