// Command line of cilkprofd (see daemon_options.h).
#include "daemon_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "cilkprof/aggregator/framing.h"

namespace cilkprof::daemon {

std::string DefaultSocketPath() {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  if (runtime_dir != nullptr && runtime_dir[0] != '\0') {
    return std::string(runtime_dir) + "/cilkprofd.sock";
  }
  return fmt::format("/tmp/cilkprofd-{}.sock", ::getuid());
}

ParsedCommandLine ParseDaemonOptions(const std::vector<std::string>& args) {
  ParsedCommandLine parsed;
  DaemonOptions& o = parsed.options;
  o.socket_path = DefaultSocketPath();
  CLI::App app{
      "cilkprofd: collects profiles from Cilkprof agents and writes one profile file per "
      "profiled process (DIR/<program>.<pid>[.<n>].cilkprof).",
      "cilkprofd"};
  app.add_option("--socket", o.socket_path, "Unix socket agents connect to (mode 0600)")
      ->capture_default_str();
  app.add_option("--tcp", o.tcp_endpoint,
                 "also listen on HOST:PORT ([v6]:PORT for IPv6); no access control, trusted "
                 "networks only");
  app.add_option("--output-dir", o.output_dir, "directory for the profile files")
      ->capture_default_str();
  app.add_option("--max-frame-bytes", o.max_frame_bytes,
                 "largest message accepted; larger ones drop the connection")
      ->capture_default_str()
      ->check(CLI::Range(size_t{16}, aggregator::kMaxFrameBytes));
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--drain-ms", o.drain_ms,
                 "on SIGINT/SIGTERM, wait up to this long for connected agents to finish")
      ->capture_default_str();
  app.set_version_flag("--version", "cilkprofd 0.1.0");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    parsed.exit_now = true;
    parsed.exit_code = e.get_exit_code();
    std::ostringstream out, err;
    app.exit(e, out, err);
    parsed.output = parsed.exit_code == 0 ? out.str() : err.str();
    parsed.output_is_error = parsed.exit_code != 0;
  }
  return parsed;
}

Status ValidateDaemonOptions(const DaemonOptions& options) {
  struct stat st {};
  if (::stat(options.output_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error(fmt::format(
        "the output directory {} does not exist; create it or pass another --output-dir",
        options.output_dir));
  }
  if (::access(options.output_dir.c_str(), W_OK | X_OK) != 0) {
    return Status::Error(fmt::format(
        "the output directory {} is not writable; fix its permissions or pass another "
        "--output-dir",
        options.output_dir));
  }
  return Status::Ok();
}

}  // namespace cilkprof::daemon
