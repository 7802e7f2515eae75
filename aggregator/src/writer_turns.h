// Hands finished sessions to the profile writer one at a time, the clients in turn
// (internal to the server): a client that ends thousands of connections gets one
// profile written, then every other client with a profile waiting gets one, and so on.
// Without it the writer's queue is first come, first served, and a real program's
// profile waits behind the whole flood. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "profile_writer.h"

namespace cilkprof::aggregator::internal {

class WriterTurns {
 public:
  // `submit` gives one session to the writer; FinishedOne() must follow each.
  explicit WriterTurns(std::function<void(FinishedSession)> submit) : submit_(std::move(submit)) {}

  void Add(const std::string& client, FinishedSession work) {
    std::lock_guard lock(mutex_);
    std::deque<FinishedSession>& queue = queues_[client];
    if (queue.empty()) turns_.push_back(client);
    queue.push_back(std::move(work));
    SubmitNextLocked();
  }

  // The writer is done with the session submitted last.
  void FinishedOne() {
    std::lock_guard lock(mutex_);
    busy_ = false;
    SubmitNextLocked();
    if (!busy_) idle_.notify_all();
  }

  // Waits until every session added has been written.
  void WaitUntilIdle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return !busy_ && turns_.empty(); });
  }

 private:
  void SubmitNextLocked() {
    if (busy_ || turns_.empty()) return;
    const std::string client = std::move(turns_.front());
    turns_.pop_front();
    const auto queue = queues_.find(client);
    FinishedSession work = std::move(queue->second.front());
    queue->second.pop_front();
    if (queue->second.empty()) {
      queues_.erase(queue);
    } else {
      turns_.push_back(client);  // its next one after the other clients' next
    }
    busy_ = true;
    submit_(std::move(work));
  }

  const std::function<void(FinishedSession)> submit_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::unordered_map<std::string, std::deque<FinishedSession>> queues_;  // by client
  std::deque<std::string> turns_;  // clients with sessions waiting, in turn
  bool busy_ = false;
};

}  // namespace cilkprof::aggregator::internal
