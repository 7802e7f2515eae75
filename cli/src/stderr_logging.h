// Where cilkprof's log lines go: spdlog's default logger writes to standard output,
// which under `cilkprof run` is the program's and for `view`/`summary` is the data.
// Every line goes to our stderr instead, as "cilkprof: <message>" like our other
// messages.
#pragma once

#include <spdlog/common.h>

namespace cilkprof::cli {

// Replaces spdlog's default logger with one on stderr, at `level`.
void RouteLogsToStderr(spdlog::level::level_enum level);

}  // namespace cilkprof::cli
