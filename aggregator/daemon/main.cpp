// cilkprofd: runs the aggregator until SIGINT or SIGTERM, writing one profile per
// profiled process into --output-dir. See daemon_options.h for the command line.
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/server.h"
#include "daemon_logging.h"
#include "daemon_options.h"

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
  aggregator_options.tcp_endpoint = options.tcp_endpoint;
  aggregator_options.max_frame_bytes = options.max_frame_bytes;
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

  int signal_number = 0;
  while (sigwait(&shutdown_signals, &signal_number) != 0) {
  }
  spdlog::info("cilkprofd: {} received, shutting down", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  const auto written = (*started)->Finish(std::chrono::milliseconds(options.drain_ms));
  size_t failed = 0;
  for (const auto& profile : written) failed += profile.status.ok() ? 0 : 1;
  spdlog::info("cilkprofd: {} profile(s) written, {} failed, {} connection(s) dropped for bad data",
               written.size() - failed, failed, (*started)->connections_dropped());
  // Profiles are on disk and the socket is gone; only log lines may still be queued.
  daemon::DrainDaemonLog(std::chrono::seconds(1));
  _exit(failed == 0 ? 0 : 1);
}
