// Bounds how often one kind of log message is written, so that a flood of bad
// connections (a port scanner, a fuzzer, a misconfigured client) cannot flood the log.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace cilkprof::aggregator::internal {

class LogLimiter {
 public:
  // At most `burst` messages per `window`.
  LogLimiter(int burst, std::chrono::steady_clock::duration window)
      : burst_(burst), window_(window) {}

  // True if a message may be logged now. Then *suppressed holds how many were refused
  // since the last one allowed (to mention in the message), and is reset.
  bool Allow(uint64_t* suppressed) {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= window_) {
      window_start_ = now;
      used_ = 0;
    }
    if (used_ >= burst_) {
      ++suppressed_;
      return false;
    }
    ++used_;
    *suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  std::mutex mutex_;
  const int burst_;
  const std::chrono::steady_clock::duration window_;
  std::chrono::steady_clock::time_point window_start_{};
  int used_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace cilkprof::aggregator::internal
