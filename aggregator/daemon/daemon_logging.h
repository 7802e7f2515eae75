// cilkprofd's log: asynchronous, so that a stalled log reader (a full pipe, a stuck
// terminal) never stalls the aggregator; under pressure the oldest lines are dropped.
// Every message is escaped (log_escape.h): text a client chose cannot forge a line.
#pragma once

#include <spdlog/sinks/sink.h>

#include <chrono>
#include <memory>
#include <string>

namespace cilkprof::daemon {

// A sink that escapes each message, then hands it to `inner`.
std::shared_ptr<spdlog::sinks::sink> MakeEscapingSink(std::shared_ptr<spdlog::sinks::sink> inner);

// Makes the default spdlog logger an asynchronous, escaping stderr logger at `level`.
void InstallDaemonLogger(const std::string& level);

// Gives the log thread up to `limit` to write what is queued. The daemon then ends
// with _exit: joining a log thread blocked on a full pipe would hang the shutdown.
void DrainDaemonLog(std::chrono::milliseconds limit);

}  // namespace cilkprof::daemon
