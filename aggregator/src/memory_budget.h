// The aggregator's memory budget for buffered frames (internal to the server).
//
// A connection buffers one frame at a time (FrameDecoder holds it until it is
// complete). Before it reads a frame's payload it reserves the whole frame here; when
// the frame is merged it releases it. So the bytes buffered across all connections
// never exceed the capacity, whatever the clients send: a connection that does not fit
// waits without reading (backpressure: its bytes stay in the kernel and, once the
// socket buffer is full, the sender blocks or spills), and a frame larger than the
// whole budget is refused by the caller (it could never fit).
//
// Reserving the whole frame at once, rather than the bytes as they arrive, means a
// connection never holds half a frame it may not be able to finish: two connections
// each holding half the budget and each waiting for the other to give up cannot occur.
//
// Waiters are served in arrival order (first come, first served), so a stream of small
// frames cannot starve a large one. Thread-safe; grants are called without the lock
// held, on the thread that released the memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace cilkprof::aggregator::internal {

class MemoryBudget {
 public:
  // Called once the bytes a waiter asked for have been reserved on its behalf.
  using Grant = std::function<void()>;

  explicit MemoryBudget(uint64_t capacity) : capacity_(capacity) {}

  uint64_t capacity() const { return capacity_; }

  // Reserves `bytes` now and returns 0 if they fit and nobody waits before us.
  // Otherwise queues the request and returns its ticket (never 0): `grant` runs when
  // the bytes have been reserved for it. `bytes` must not exceed capacity().
  uint64_t ReserveOrWait(uint64_t bytes, Grant grant) {
    std::lock_guard lock(mutex_);
    if (waiters_.empty() && Fits(bytes)) {
      Take(bytes);
      return 0;
    }
    ++waits_;
    const uint64_t ticket = ++last_ticket_;
    waiters_.push_back(Waiter{ticket, bytes, std::move(grant)});
    return ticket;
  }

  // Reserves `bytes` if they fit now, ignoring the queue (for a connection being shut
  // down, which will not wait).
  bool TryReserve(uint64_t bytes) {
    std::lock_guard lock(mutex_);
    if (!Fits(bytes)) return false;
    Take(bytes);
    return true;
  }

  // Withdraws a queued request. False if it was granted already: its grant has run or
  // is running, and the caller owns the bytes (and must Release them).
  bool Cancel(uint64_t ticket) {
    std::lock_guard lock(mutex_);
    const auto it = std::find_if(waiters_.begin(), waiters_.end(),
                                 [&](const Waiter& w) { return w.ticket == ticket; });
    if (it == waiters_.end()) return false;
    waiters_.erase(it);
    return true;
  }

  // Gives back reserved bytes, then grants the queued requests that now fit, in order.
  void Release(uint64_t bytes) {
    std::vector<Grant> granted;
    {
      std::lock_guard lock(mutex_);
      reserved_ -= std::min(bytes, reserved_);
      while (!waiters_.empty() && Fits(waiters_.front().bytes)) {
        Take(waiters_.front().bytes);
        granted.push_back(std::move(waiters_.front().grant));
        waiters_.pop_front();
      }
    }
    for (Grant& grant : granted) grant();
  }

  uint64_t reserved() const {
    std::lock_guard lock(mutex_);
    return reserved_;
  }
  // The most ever reserved at once: never above capacity().
  uint64_t peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }
  // Requests that had to wait, in total; and those waiting now.
  uint64_t waits() const {
    std::lock_guard lock(mutex_);
    return waits_;
  }
  size_t waiting() const {
    std::lock_guard lock(mutex_);
    return waiters_.size();
  }

 private:
  struct Waiter {
    uint64_t ticket;
    uint64_t bytes;
    Grant grant;
  };

  bool Fits(uint64_t bytes) const { return bytes <= capacity_ - reserved_; }
  void Take(uint64_t bytes) {
    reserved_ += bytes;
    peak_ = std::max(peak_, reserved_);
  }

  const uint64_t capacity_;
  mutable std::mutex mutex_;
  uint64_t reserved_ = 0;
  uint64_t peak_ = 0;
  uint64_t waits_ = 0;
  uint64_t last_ticket_ = 0;
  std::deque<Waiter> waiters_;
};

}  // namespace cilkprof::aggregator::internal
