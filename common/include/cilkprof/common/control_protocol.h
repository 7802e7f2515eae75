// The control socket of a standby agent: where it is and what is said on it
// (docs/AGENT.md, "Standby and attach").
//
// A standby agent (CILKPROF_STANDBY=1, or loaded by `cilkprof attach`'s injection)
// listens on /tmp/cilkprof-<euid>/agent-<pid>.sock in its own mount namespace; the
// directory is its user's, mode 0700, and the agent checks every peer's credentials
// (its own uid or root). `cilkprof attach` reaches it through /proc/<pid>/root, so a
// service with a private /tmp (systemd PrivateTmp=yes) is reachable too.
//
// One request per connection, as one text line:
//   ATTACH 1 clock=cpu period_ns=1000000 unwind=dwarf workspan=1 locks=1 persistent=0 source=auto flush_ms=1000
//          timeline=0
//     with one descriptor in SCM_RIGHTS on the same sendmsg: a stream socket connected
//     to an aggregator. Replies: "OK pid=N runtime=NAME injected=0|1", "BUSY why" or
//     "ERROR why". Not persistent: the connection stays open and "DETACH" on it, or its
//     end, detaches; the agent answers "DETACHED" once its last data is sent. Persistent
//     (`cilkprof attach --daemon`): the agent closes the connection and streams on.
//   DETACH   ends an attach (answer "DETACHED", or "ERROR not attached").
//   STATUS   "STATUS attached=0|1 persistent=0|1 pid=N".
// Header-only with no Status or fmt: the preloaded agent includes it too. Not
// signal-safe (allocates).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace cilkprof::control {

inline constexpr int kProtocolVersion = 1;
// The longest request or reply line, newline included.
inline constexpr size_t kMaxLineBytes = 1024;

inline std::string SocketDirectory(uid_t uid) { return "/tmp/cilkprof-" + std::to_string(uid); }
inline std::string SocketName(pid_t pid) { return "agent-" + std::to_string(pid) + ".sock"; }
inline std::string SocketPath(uid_t uid, pid_t pid) { return SocketDirectory(uid) + "/" + SocketName(pid); }

struct AttachRequest {
  std::string clock = "cpu";     // cpu, wall
  uint64_t period_ns = 1000000;
  std::string unwind = "dwarf";  // dwarf, fp
  bool workspan = true;
  bool locks = true;
  bool persistent = false;
  std::string source = "auto";   // auto, perf, timer
  uint32_t flush_ms = 1000;
  bool timeline = false;         // per-thread timeline (issue 16; docs/AGENT.md "Timeline")
};

// "key=value" words after the first `skip` words of a line, newline dropped.
inline std::map<std::string, std::string> ParseWords(std::string_view line, size_t skip) {
  std::map<std::string, std::string> words;
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  size_t index = 0;
  while (!line.empty()) {
    const size_t space = line.find(' ');
    const std::string_view word = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (word.empty()) continue;
    if (index++ < skip) continue;
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) {
      words[std::string(word)] = "";
    } else {
      words[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
    }
  }
  return words;
}

// The first word of a line ("ATTACH", "OK", ...).
inline std::string Verb(std::string_view line) {
  const size_t end = line.find_first_of(" \n");
  return std::string(line.substr(0, end));
}

// What follows the verb, newline dropped (the reason of BUSY and ERROR).
inline std::string Rest(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const size_t space = line.find(' ');
  return space == std::string_view::npos ? std::string() : std::string(line.substr(space + 1));
}

inline std::string EncodeAttach(const AttachRequest& r) {
  return "ATTACH " + std::to_string(kProtocolVersion) + " clock=" + r.clock +
         " period_ns=" + std::to_string(r.period_ns) + " unwind=" + r.unwind +
         " workspan=" + (r.workspan ? "1" : "0") + " locks=" + (r.locks ? "1" : "0") +
         " persistent=" + (r.persistent ? "1" : "0") + " source=" + r.source +
         " flush_ms=" + std::to_string(r.flush_ms) + " timeline=" + (r.timeline ? "1" : "0") + "\n";
}

namespace detail {
inline bool ParseNumber(const std::string& text, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (value < lo || value > hi) return false;
  *out = value;
  return true;
}
inline bool ParseFlag(const std::string& text, bool* out) {
  if (text != "0" && text != "1") return false;
  *out = text == "1";
  return true;
}
}  // namespace detail

// Parses an ATTACH line; false with the reason (sent back as "ERROR <reason>").
inline bool ParseAttach(std::string_view line, AttachRequest* out, std::string* error) {
  if (Verb(line) != "ATTACH") {
    *error = "not an ATTACH request";
    return false;
  }
  const std::string rest = Rest(line);
  const std::string version = rest.substr(0, rest.find(' '));
  if (version != std::to_string(kProtocolVersion)) {
    *error = "control protocol version " + version + " is not this agent's (" +
             std::to_string(kProtocolVersion) + "): use cilkprof and the agent of the same release";
    return false;
  }
  AttachRequest r;
  for (const auto& [key, value] : ParseWords(line, 2)) {
    uint64_t number = 0;
    bool ok = true;
    if (key == "clock") {
      ok = value == "cpu" || value == "wall";
      r.clock = value;
    } else if (key == "period_ns") {
      ok = detail::ParseNumber(value, 10000, 10000000000ull, &number);
      r.period_ns = number;
    } else if (key == "unwind") {
      ok = value == "dwarf" || value == "fp";
      r.unwind = value;
    } else if (key == "workspan") {
      ok = detail::ParseFlag(value, &r.workspan);
    } else if (key == "locks") {
      ok = detail::ParseFlag(value, &r.locks);
    } else if (key == "persistent") {
      ok = detail::ParseFlag(value, &r.persistent);
    } else if (key == "source") {
      ok = value == "auto" || value == "perf" || value == "timer";
      r.source = value;
    } else if (key == "timeline") {
      ok = detail::ParseFlag(value, &r.timeline);
    } else if (key == "flush_ms") {
      ok = detail::ParseNumber(value, 10, 3600000, &number);
      r.flush_ms = static_cast<uint32_t>(number);
    }  // unknown keys are ignored: a newer cilkprof may send more
    if (!ok) {
      *error = "invalid " + key + "=" + value;
      return false;
    }
  }
  *out = r;
  return true;
}

}  // namespace cilkprof::control
