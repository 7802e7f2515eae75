// cilkprofd's asynchronous log (see daemon_logging.h).
#include "daemon_logging.h"

#include <spdlog/async.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <thread>

namespace cilkprof::daemon {

void InstallDaemonLogger(const std::string& level) {
  spdlog::init_thread_pool(8192, 1);
  auto logger = std::make_shared<spdlog::async_logger>(
      "cilkprofd", std::make_shared<spdlog::sinks::stderr_color_sink_mt>(), spdlog::thread_pool(),
      spdlog::async_overflow_policy::overrun_oldest);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

void DrainDaemonLog(std::chrono::milliseconds limit) {
  auto pool = spdlog::thread_pool();
  if (!pool) return;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pool->queue_size() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace cilkprof::daemon
