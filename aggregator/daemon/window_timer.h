// cilkprofd's continuous mode (--window): a thread with a Boost.Asio steady timer that
// calls Aggregator::CutWindow at every window boundary of the system clock (multiples
// of the window since the Unix epoch, as continuous profilers align theirs), passing
// the boundary itself, so that every process's windows share their start times.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <thread>

#include "cilkprof/aggregator/server.h"

namespace cilkprof::daemon {

// The first boundary strictly after `now_unix_ns` (ns since the Unix epoch).
uint64_t NextWindowBoundary(uint64_t now_unix_ns, std::chrono::nanoseconds window);

class WindowTimer {
 public:
  // Starts cutting `aggregator`'s windows; it must outlive this object.
  WindowTimer(aggregator::Aggregator& aggregator, std::chrono::nanoseconds window);
  // Stops: a cut under way completes first.
  ~WindowTimer();
  WindowTimer(const WindowTimer&) = delete;
  WindowTimer& operator=(const WindowTimer&) = delete;

 private:
  void Arm();

  aggregator::Aggregator& aggregator_;
  const std::chrono::nanoseconds window_;
  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  uint64_t boundary_ = 0;  // the one the timer waits for
  std::thread thread_;     // last: starts after the members it uses
};

}  // namespace cilkprof::daemon
