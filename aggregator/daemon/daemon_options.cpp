// Command line of cilkprofd (see daemon_options.h).
#include "daemon_options.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <limits>
#include <sstream>

#include "cilkprof/aggregator/framing.h"
#include "socket_directory.h"
#include "window_duration.h"

namespace cilkprof::daemon {

std::string DefaultSocketPath() { return DefaultSocketDirectory() + "/cilkprofd.sock"; }

ParsedCommandLine ParseDaemonOptions(const std::vector<std::string>& args) {
  ParsedCommandLine parsed;
  DaemonOptions& o = parsed.options;
  o.socket_path = DefaultSocketPath();
  CLI::App app{
      "cilkprofd: collects profiles from Cilkprof agents and writes one profile file per "
      "profiled process (DIR/<program>.<pid>[.<n>].cilkprof), or with --window one per "
      "process per window (DIR/<program>.<pid>.<UTC start>.cilkprof). Security and limits: "
      "docs/SECURITY.md.",
      "cilkprofd"};
  app.add_option("--socket", o.socket_path,
                 "Unix socket agents connect to; the default's directory is created private "
                 "(0700) and checked")
      ->capture_default_str();
  app.add_option("--socket-mode", o.socket_mode,
                 "permissions of the socket: 600 (only you), or 660/666 for --allow-uid")
      ->capture_default_str()
      ->check(CLI::IsMember({"600", "660", "666"}));
  app.add_option("--allow-uid", o.allow_uids,
                 "also accept agents of this user (uid or name; repeatable); by default only "
                 "your own uid and root");
  app.add_option("--tcp", o.tcp_endpoint,
                 "also listen on HOST:PORT ([v6]:PORT for IPv6); needs --tcp-secret-file; trusted "
                 "networks only");
  app.add_option("--tcp-secret-file", o.tcp_secret_file,
                 "file (mode 600) with the token TCP agents must present");
  app.add_option("--output-dir", o.output_dir, "directory for the profile files")
      ->capture_default_str();
  app.add_option("--max-frame-bytes", o.max_frame_bytes,
                 "largest message accepted; larger ones drop the connection")
      ->capture_default_str()
      ->check(CLI::Range(size_t{16}, aggregator::kMaxFrameBytes));
  app.add_option("--memory-budget", o.memory_budget,
                 "bytes all connections together may hold in frames being received")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1} << 16, size_t{1} << 40));
  app.add_option("--max-connections-per-client", o.max_connections_per_client,
                 "connections open at once per client process (TCP: per address); 0 = no limit")
      ->capture_default_str();
  app.add_option("--max-connections-per-uid", o.max_connections_per_uid,
                 "connections open at once per uid; 0 = no limit")
      ->capture_default_str();
  app.add_option("--max-profiles-per-minute", o.max_profiles_per_minute,
                 "profiles written per client per minute; the rest are not written; 0 = no limit")
      ->capture_default_str();
  app.add_option("--max-tcp-connections-per-minute", o.max_tcp_connections_per_minute,
                 "TCP connections accepted per address per minute; 0 = no limit")
      ->capture_default_str();
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--drain-ms", o.drain_ms,
                 "on SIGINT/SIGTERM, wait up to this long for connected agents to finish")
      ->capture_default_str();
  std::string window_text;
  app.add_option("--window", window_text,
                 "continuous mode: every DURATION (e.g. 60s, 10m, 1h; windows aligned to the "
                 "clock), write each connected process's profile of that window")
      ->type_name("DURATION")
      ->check(CLI::Validator(
          [](std::string& text) {
            const auto parsed = ParseWindowDuration(text);
            return parsed.ok() ? std::string() : parsed.status().message();
          },
          ""));
  app.add_option("--keep", o.keep,
                 "with --window: keep the newest N window files of each process, delete older "
                 "ones; 0 = keep all")
      ->capture_default_str();
  app.set_version_flag("--version", "cilkprofd 0.1.0");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
    o.socket_is_default = app.count("--socket") == 0;
    o.keep_given = app.count("--keep") != 0;
    if (!window_text.empty()) o.window = *ParseWindowDuration(window_text);
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

Result<std::vector<uint32_t>> AllowedUids(const DaemonOptions& options) {
  std::vector<uint32_t> uids;
  for (const std::string& user : options.allow_uids) {
    char* end = nullptr;
    const unsigned long long number = std::strtoull(user.c_str(), &end, 10);
    if (!user.empty() && *end == '\0' && user[0] != '-' &&
        number <= std::numeric_limits<uint32_t>::max()) {
      uids.push_back(static_cast<uint32_t>(number));
      continue;
    }
    const passwd* entry = ::getpwnam(user.c_str());
    if (entry == nullptr) {
      return Status::Error(fmt::format(
          "--allow-uid {}: no such user; give a uid (a number) or an existing user name", user));
    }
    uids.push_back(static_cast<uint32_t>(entry->pw_uid));
  }
  return uids;
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
  if (!options.tcp_endpoint.empty() && options.tcp_secret_file.empty()) {
    return Status::Error(
        "--tcp needs --tcp-secret-file: agents over TCP must present a shared token; create one "
        "with '(umask 077; openssl rand -hex 32 > FILE)' (see docs/SECURITY.md)");
  }
  if (options.tcp_endpoint.empty() && !options.tcp_secret_file.empty()) {
    return Status::Error("--tcp-secret-file is for TCP agents: give --tcp HOST:PORT too, or drop it");
  }
  if (options.keep_given && options.window.count() == 0) {
    return Status::Error("--keep rotates the files of --window: give --window DURATION too, or drop --keep");
  }
  if (auto uids = AllowedUids(options); !uids.ok()) return uids.status();
  return Status::Ok();
}

}  // namespace cilkprof::daemon
