#include "stderr_logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "cilkprof/aggregator/log_escape.h"
#include "commands.h"

namespace cilkprof::cli {
namespace {

class StderrLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    // Program names and paths in messages are the program's choice: escaped, so
    // that they cannot forge a line or drive the terminal.
    PrintError(aggregator::EscapeForLog(std::string_view(msg.payload.data(), msg.payload.size())));
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

void RouteLogsToStderr(spdlog::level::level_enum level) {
  auto logger = std::make_shared<spdlog::logger>("cilkprof", std::make_shared<StderrLogSink>());
  logger->set_level(level);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace cilkprof::cli
