// cilkprofd's asynchronous log (see daemon_logging.h).
#include "daemon_logging.h"

#include <spdlog/async.h>
#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "cilkprof/aggregator/log_escape.h"

namespace cilkprof::daemon {
namespace {

// Escapes each message (log_escape.h) before the wrapped sink formats and writes it:
// every line of the log, whichever part of the aggregator wrote it, is one line.
class EscapingSink final : public spdlog::sinks::sink {
 public:
  explicit EscapingSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}

  void log(const spdlog::details::log_msg& msg) override {
    const std::string escaped = aggregator::EscapeForLog(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
    inner_->log(copy);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

std::shared_ptr<spdlog::sinks::sink> MakeEscapingSink(std::shared_ptr<spdlog::sinks::sink> inner) {
  return std::make_shared<EscapingSink>(std::move(inner));
}

void InstallDaemonLogger(const std::string& level) {
  spdlog::init_thread_pool(8192, 1);
  auto logger = std::make_shared<spdlog::async_logger>(
      "cilkprofd", MakeEscapingSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()),
      spdlog::thread_pool(), spdlog::async_overflow_policy::overrun_oldest);
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
