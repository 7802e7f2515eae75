// cilkprofd: runs the aggregator until SIGINT or SIGTERM, writing one profile per
// profiled process into --output-dir. See daemon_options.h for the command line and
// docs/SECURITY.md for who may connect and what limits apply.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/server.h"
#include "daemon_logging.h"
#include "daemon_options.h"
#include "socket_directory.h"
#include "window_timer.h"

namespace {

// Each agent connection is a descriptor: take the hard limit (up to 65536) rather than
// the usual soft 1024, so the per-uid limit (1024 by default), not EMFILE, decides.
void RaiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = std::min<rlim_t>(limit.rlim_max, 65536);
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = wanted;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cilkprof;
  const daemon::ParsedCommandLine parsed =
      daemon::ParseDaemonOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.exit_now) {
    (parsed.output_is_error ? std::cerr : std::cout) << parsed.output;
    return parsed.exit_code;
  }
  const daemon::DaemonOptions& options = parsed.options;
  if (Status valid = daemon::ValidateDaemonOptions(options); !valid.ok()) {
    std::cerr << "cilkprofd: " << valid.message() << "\n";
    return 2;
  }
  if (options.socket_is_default) {
    if (Status private_dir = daemon::PreparePrivateDirectory(DirectoryOf(options.socket_path));
        !private_dir.ok()) {
      std::cerr << "cilkprofd: " << private_dir.message() << "\n";
      return 1;
    }
  }
  RaiseDescriptorLimit();
  // Block the shutdown signals in every thread and take them synchronously below: no
  // work in a signal handler. The log's and the aggregator's threads inherit this mask,
  // so they are created after it: a thread that left SIGTERM unblocked would receive
  // it while main is not yet in sigwait, and its default action would kill the daemon.
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGINT);
  sigaddset(&shutdown_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);
  daemon::InstallDaemonLogger(options.log_level);

  aggregator::AggregatorOptions aggregator_options;
  aggregator_options.unix_socket_path = options.socket_path;
  aggregator_options.list_written_profiles = false;  // counts only (stats): it runs for days
  aggregator_options.unix_socket_mode = static_cast<uint32_t>(std::stoul(options.socket_mode, nullptr, 8));
  // Our own uid, and those of --allow-uid (validated above).
  const auto allowed = daemon::AllowedUids(options);
  aggregator_options.allowed_peer_uids = {static_cast<uint32_t>(::geteuid())};
  if (allowed.ok()) {
    for (uint32_t uid : *allowed) aggregator_options.allowed_peer_uids.push_back(uid);
  }
  aggregator_options.tcp_endpoint = options.tcp_endpoint;
  aggregator_options.tcp_secret_file = options.tcp_secret_file;
  aggregator_options.max_frame_bytes = options.max_frame_bytes;
  aggregator_options.memory_budget_bytes = options.memory_budget;
  aggregator_options.max_connections_per_client = options.max_connections_per_client;
  aggregator_options.max_connections_per_uid = options.max_connections_per_uid;
  aggregator_options.max_profiles_per_client = options.max_profiles_per_minute;
  aggregator_options.max_tcp_connections_per_address = options.max_tcp_connections_per_minute;
  aggregator_options.limit_window = std::chrono::minutes(1);
  aggregator_options.window = options.window;
  aggregator_options.keep_windows = options.keep;
  aggregator_options.output_path = [dir = options.output_dir](const aggregator::ProcessKey& key) {
    return aggregator::UniqueProfilePath(dir, key);
  };
  auto started = aggregator::Aggregator::Start(std::move(aggregator_options));
  if (!started.ok()) {
    std::cerr << "cilkprofd: " << started.status().message() << "\n";
    daemon::DrainDaemonLog(std::chrono::seconds(1));
    _exit(1);
  }
  spdlog::info("cilkprofd: writing profiles to {}", options.output_dir);
  // Continuous mode: the cuts run on a thread of their own, which is stopped before
  // Finish (no cut once the connections are being closed).
  std::unique_ptr<daemon::WindowTimer> windows;
  if (options.window.count() > 0) {
    spdlog::info("cilkprofd: continuous mode, a profile per process every {} s (windows aligned to "
                 "the clock), keeping {} per process",
                 options.window.count(),
                 options.keep == 0 ? std::string("all") : fmt::format("the newest {}", options.keep));
    windows = std::make_unique<daemon::WindowTimer>(**started, options.window);
  }

  int signal_number = 0;
  while (sigwait(&shutdown_signals, &signal_number) != 0) {
  }
  spdlog::info("cilkprofd: {} received, shutting down", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  windows.reset();
  (*started)->Finish(std::chrono::milliseconds(options.drain_ms));
  const aggregator::AggregatorStats stats = (*started)->stats();
  const uint64_t failed = stats.profiles_failed;
  spdlog::info("cilkprofd: {} profile(s) written, {} failed, {} connection(s) dropped for bad data",
               stats.profiles_written, failed, stats.connections_dropped);
  if (stats.refused_peer_uid + stats.refused_connection_limit + stats.refused_tcp_rate +
          stats.refused_authentication + stats.profiles_over_limit >
      0) {
    spdlog::info(
        "cilkprofd: refused {} connection(s) of other users, {} over the connection limits, {} "
        "over the TCP rate, {} unauthenticated; {} profile(s) not written over the per-client "
        "limit",
        stats.refused_peer_uid, stats.refused_connection_limit, stats.refused_tcp_rate,
        stats.refused_authentication, stats.profiles_over_limit);
  }
  // Profiles are on disk and the socket is gone; only log lines may still be queued.
  daemon::DrainDaemonLog(std::chrono::seconds(1));
  _exit(failed == 0 ? 0 : 1);
}
