// Command line of cilkprofd, and the defaults it derives from the environment.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::daemon {

struct DaemonOptions {
  std::string socket_path;   // default: DefaultSocketPath()
  std::string tcp_endpoint;  // empty: no TCP
  std::string output_dir = ".";
  size_t max_frame_bytes = 64u << 20;
  std::string log_level = "info";
  unsigned drain_ms = 0;     // on SIGINT/SIGTERM, wait this long for agents' last deltas
};

// $XDG_RUNTIME_DIR/cilkprofd.sock, or /tmp/cilkprofd-<uid>.sock without it.
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
// writable, the log level is known.
Status ValidateDaemonOptions(const DaemonOptions& options);

}  // namespace cilkprof::daemon
