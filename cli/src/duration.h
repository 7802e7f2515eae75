// Parsing sampling periods and frequencies given on the command line.
#pragma once

#include <cstdint>
#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::cli {

// The agent accepts periods from 10 us to 10 s.
inline constexpr uint64_t kMinPeriodNs = 10'000;
inline constexpr uint64_t kMaxPeriodNs = 10'000'000'000;

// "1ms", "500us", "0.5ms", "2s", "250000ns" (a unit is required) -> nanoseconds.
Result<uint64_t> ParsePeriod(const std::string& text);

// Hz -> nanoseconds, like perf's -F.
Result<uint64_t> PeriodFromFrequency(double hz);

// A length of time with a unit (ms, s, m or min, h, d) from 1ms to 366d, in ns: the
// duration of an attach (`cilkprof attach --duration 30s`).
Result<uint64_t> ParseDuration(const std::string& text);

}  // namespace cilkprof::cli
