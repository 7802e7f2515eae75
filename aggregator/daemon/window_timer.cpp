// cilkprofd's window cuts (see window_timer.h).
#include "window_timer.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

namespace cilkprof::daemon {
namespace {

uint64_t NowUnixNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

uint64_t NextWindowBoundary(uint64_t now_unix_ns, std::chrono::nanoseconds window) {
  const uint64_t length = static_cast<uint64_t>(window.count());
  return (now_unix_ns / length + 1) * length;
}

WindowTimer::WindowTimer(aggregator::Aggregator& aggregator, std::chrono::nanoseconds window)
    : aggregator_(aggregator), window_(window), timer_(io_), thread_([this] {
        Arm();
        io_.run();
      }) {}

WindowTimer::~WindowTimer() {
  boost::asio::post(io_, [this] { io_.stop(); });
  if (thread_.joinable()) thread_.join();
}

// The wait is measured on the steady clock, the boundary taken from the system clock
// each time: a clock step (NTP) moves the next boundary, never the cadence of old ones.
// A cut that takes longer than a window (a slow disk) skips boundaries rather than
// queueing them: the next window then spans from the last cut.
void WindowTimer::Arm() {
  const uint64_t now = NowUnixNs();
  boundary_ = NextWindowBoundary(now, window_);
  timer_.expires_after(std::chrono::nanoseconds(boundary_ - now));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    const auto written = aggregator_.CutWindow(boundary_);
    spdlog::debug("cilkprofd: window ending {} cut, {} profile(s) written", boundary_, written.size());
    Arm();
  });
}

}  // namespace cilkprof::daemon
