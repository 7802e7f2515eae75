// Command line of cilkprofd, and the defaults it derives from the environment.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::daemon {

struct DaemonOptions {
  std::string socket_path;   // default: DefaultSocketPath()
  bool socket_is_default = true;  // no --socket: the directory is made private first
  std::string socket_mode = "600";
  std::vector<std::string> allow_uids;  // uids or user names, besides ours and root
  std::string tcp_endpoint;  // empty: no TCP
  std::string tcp_secret_file;
  std::string output_dir = ".";
  size_t max_frame_bytes = 64u << 20;
  size_t memory_budget = 256u << 20;
  uint32_t max_connections_per_client = 64;
  uint32_t max_connections_per_uid = 1024;
  uint32_t max_profiles_per_minute = 600;
  uint32_t max_tcp_connections_per_minute = 600;
  std::string log_level = "info";
  unsigned drain_ms = 0;     // on SIGINT/SIGTERM, wait this long for agents' last deltas
  // Continuous mode: a profile per process per window (--window); 0: off.
  std::chrono::seconds window{0};
  uint32_t keep = 60;        // window files kept per process (--keep); 0: all
  bool keep_given = false;
};

// <DefaultSocketDirectory()>/cilkprofd.sock: $XDG_RUNTIME_DIR/cilkprof/cilkprofd.sock,
// or /tmp/cilkprof-<uid>/cilkprofd.sock without it.
std::string DefaultSocketPath();

// What ParseDaemonOptions decided: run with `options`, or exit with `exit_code`
// after printing `output` (help, version, or a usage error) to stdout or stderr.
struct ParsedCommandLine {
  DaemonOptions options;
  bool exit_now = false;
  int exit_code = 0;
  std::string output;
  bool output_is_error = false;
};

ParsedCommandLine ParseDaemonOptions(const std::vector<std::string>& args);

// Checks what can be checked before starting: the output directory exists and is
// writable, --tcp comes with --tcp-secret-file, every --allow-uid names a user, --keep
// comes with --window.
Status ValidateDaemonOptions(const DaemonOptions& options);

// The uids of --allow-uid (numbers, or user names looked up).
Result<std::vector<uint32_t>> AllowedUids(const DaemonOptions& options);

}  // namespace cilkprof::daemon
