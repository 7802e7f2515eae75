#include "config.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cilkprof/common/tcp_secret.h"

namespace cilkprof::agent {
namespace {

// Parses a whole decimal number in [lo, hi]; false on anything else.
bool ParseUnsigned(const char* text, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (text == nullptr || *text == '\0' || *text == '-' || *text == '+') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  if (value < lo || value > hi) return false;
  *out = value;
  return true;
}

std::string Quote(const char* value) { return std::string("'") + value + "'"; }

class Parser {
 public:
  Parser(const EnvLookup& env, std::vector<std::string>* errors) : env_(env), errors_(errors) {}

  const char* Get(const char* name) {
    const char* value = env_(name);
    return (value != nullptr && *value != '\0') ? value : nullptr;
  }

  void Bad(const char* name, const char* value, const std::string& expected,
           const std::string& fallback) {
    if (errors_ != nullptr) {
      errors_->push_back(std::string(name) + "=" + Quote(value) + " is invalid: expected " +
                         expected + "; using " + fallback);
    }
  }

  template <typename T>
  void Number(const char* name, uint64_t lo, uint64_t hi, T* field) {
    const char* value = Get(name);
    if (value == nullptr) return;
    uint64_t parsed = 0;
    if (ParseUnsigned(value, lo, hi, &parsed)) {
      *field = static_cast<T>(parsed);
    } else {
      Bad(name, value,
          "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi),
          "the default " + std::to_string(*field));
    }
  }

  void Flag(const char* name, bool* field) {
    const char* value = Get(name);
    if (value == nullptr) return;
    if (std::strcmp(value, "1") == 0) {
      *field = true;
    } else if (std::strcmp(value, "0") == 0) {
      *field = false;
    } else {
      Bad(name, value, "1 or 0", std::string("the default ") + (*field ? "1" : "0"));
    }
  }

 private:
  const EnvLookup& env_;
  std::vector<std::string>* errors_;
};

bool IsUsableSignal(uint64_t signo) {
  switch (signo) {
    case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE:
    case SIGABRT: case SIGCHLD: case SIGCONT: case SIGTSTP: case SIGTTIN: case SIGTTOU:
      return false;
    default:
      return signo >= 1 && signo <= static_cast<uint64_t>(SIGRTMAX);
  }
}

// The token of a tcp: socket, read with the daemon's own checks (common/tcp_secret.h),
// or why there is none. The problem is not an error of the variable's syntax: it is
// the reason the transport gives when it spills instead of streaming (one line).
void ReadTcpToken(Parser& p, Config* config) {
  const char* path = p.Get("CILKPROF_TCP_SECRET_FILE");
  if (path == nullptr) {
    config->tcp_auth_problem =
        "CILKPROF_TCP_SECRET_FILE is not set, and the aggregator at " + config->socket +
        " accepts only agents that present its shared secret (set CILKPROF_TCP_SECRET_FILE to "
        "the file given to cilkprofd --tcp-secret-file, or to a copy of it of your own, mode 600)";
    return;
  }
  config->tcp_secret_file = path;
  TcpSecret secret = ReadTcpSecretFile(path);
  switch (secret.problem) {
    case TcpSecret::Problem::kNone:
      config->tcp_token = std::move(secret.token);
      return;
    case TcpSecret::Problem::kCannotOpen:
    case TcpSecret::Problem::kBadToken:
      config->tcp_auth_problem =
          "CILKPROF_TCP_SECRET_FILE: " + secret.error +
          " (it must be the file given to cilkprofd --tcp-secret-file, or a copy of it)";
      return;
    default:
      config->tcp_auth_problem = "CILKPROF_TCP_SECRET_FILE: " + secret.error;
      return;
  }
}

}  // namespace

bool IsTcpAddress(const std::string& socket) { return socket.rfind("tcp:", 0) == 0; }

Config ParseConfig(const EnvLookup& env, std::vector<std::string>* errors) {
  Config config;
  Parser p(env, errors);

  if (const char* socket = p.Get("CILKPROF_SOCKET")) config.socket = socket;

  if (const char* clock = p.Get("CILKPROF_CLOCK")) {
    if (std::strcmp(clock, "cpu") == 0) {
      config.clock = ClockKind::kCpu;
    } else if (std::strcmp(clock, "wall") == 0) {
      config.clock = ClockKind::kWall;
    } else {
      p.Bad("CILKPROF_CLOCK", clock, "cpu or wall", "cpu");
    }
  }

  // 10 us .. 10 s: below that the handler would dominate the program's time.
  p.Number("CILKPROF_PERIOD_NS", 10000, 10000000000ull, &config.period_ns);

  if (const char* unwind = p.Get("CILKPROF_UNWIND")) {
    if (std::strcmp(unwind, "dwarf") == 0) {
      config.unwind = UnwindKind::kDwarf;
    } else if (std::strcmp(unwind, "fp") == 0) {
      config.unwind = UnwindKind::kFramePointer;
    } else {
      p.Bad("CILKPROF_UNWIND", unwind, "dwarf or fp", "dwarf");
    }
  }

  if (const char* sig = p.Get("CILKPROF_SIGNAL")) {
    uint64_t parsed = 0;
    if (ParseUnsigned(sig, 1, static_cast<uint64_t>(SIGRTMAX), &parsed) && IsUsableSignal(parsed)) {
      config.signal = static_cast<int>(parsed);
    } else {
      p.Bad("CILKPROF_SIGNAL", sig,
            "a signal number from 1 to " + std::to_string(SIGRTMAX) +
                " other than SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and "
                "the job-control signals",
            "SIGPROF (" + std::to_string(SIGPROF) + ")");
    }
  }

  p.Flag("CILKPROF_FOLLOW_FORK", &config.follow_fork);
  p.Number("CILKPROF_FLUSH_MS", 10, 3600000, &config.flush_ms);
  p.Number("CILKPROF_MAX_NODES", 1024, 1u << 26, &config.max_nodes);

  if (const char* dir = p.Get("CILKPROF_SPILL_DIR")) {
    config.spill_dir = dir;
  } else if (const char* tmp = p.Get("TMPDIR")) {
    config.spill_dir = tmp;
  } else {
    config.spill_dir = "/tmp";
  }

  p.Flag("CILKPROF_QUIET", &config.quiet);
  p.Flag("CILKPROF_LOCKS", &config.locks);
  p.Flag("CILKPROF_STANDBY", &config.standby);
  p.Flag("CILKPROF_TIMELINE", &config.timeline);
  p.Number("CILKPROF_TIMELINE_EVENTS", 16, 1u << 24, &config.timeline_events);

  if (const char* source = p.Get("CILKPROF_SAMPLE_SOURCE")) {
    if (std::strcmp(source, "auto") == 0) {
      config.sample_source = SampleSourceChoice::kAuto;
    } else if (std::strcmp(source, "perf") == 0) {
      config.sample_source = SampleSourceChoice::kPerfEvent;
    } else if (std::strcmp(source, "timer") == 0) {
      config.sample_source = SampleSourceChoice::kTimer;
    } else if (std::strcmp(source, "none") == 0) {
      config.sample_source = SampleSourceChoice::kNone;
    } else {
      p.Bad("CILKPROF_SAMPLE_SOURCE", source, "auto, perf, timer or none", "auto");
    }
  }

  // Only a TCP address needs the secret; a Unix socket's peer is checked by the kernel.
  if (IsTcpAddress(config.socket)) ReadTcpToken(p, &config);
  return config;
}

const char* ClockName(ClockKind clock) { return clock == ClockKind::kCpu ? "cpu" : "wall"; }
const char* UnwindName(UnwindKind unwind) {
  return unwind == UnwindKind::kDwarf ? "dwarf" : "fp";
}

}  // namespace cilkprof::agent
