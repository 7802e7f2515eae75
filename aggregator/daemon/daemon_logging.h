// cilkprofd's log: asynchronous, so that a stalled log reader (a full pipe, a stuck
// terminal) never stalls the aggregator; under pressure the oldest lines are dropped.
#pragma once

#include <chrono>
#include <string>

namespace cilkprof::daemon {

// Makes the default spdlog logger an asynchronous stderr logger at `level`.
void InstallDaemonLogger(const std::string& level);

// Gives the log thread up to `limit` to write what is queued. The daemon then ends
// with _exit: joining a log thread blocked on a full pipe would hang the shutdown.
void DrainDaemonLog(std::chrono::milliseconds limit);

}  // namespace cilkprof::daemon
