// The length of cilkprofd's windows (--window): "60s", "10m", "1h", "1.5m".
//
// The CLI parses sampling periods (cli/src/duration.h, ParsePeriod), bounded to what the
// agent samples at (10 us to 10 s) and named --period in its messages, and it lives in
// the cilkprof_cli library, which depends on the aggregator, not the other way round:
// the daemon has its own parser for this other range.
#pragma once

#include <chrono>
#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::daemon {

// A window is at least a second (a profile per process per window: shorter ones cost
// more than they show) and at most a day.
inline constexpr std::chrono::seconds kMinWindow{1};
inline constexpr std::chrono::hours kMaxWindow{24};

// A number and a unit (s, m or h), a whole number of seconds in [kMinWindow, kMaxWindow].
Result<std::chrono::seconds> ParseWindowDuration(const std::string& text);

}  // namespace cilkprof::daemon
