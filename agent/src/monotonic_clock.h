// CLOCK_MONOTONIC in nanoseconds: the agent's one reading of it (the flusher's schedule,
// lock waits and releases, work/span's monotonic clock and send intervals, the
// timeline's offset to the Unix clock). Async-signal-safe.
#pragma once

#include <time.h>

#include <cstdint>

namespace cilkprof::agent {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace cilkprof::agent
