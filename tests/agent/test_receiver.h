// A tiny aggregator stand-in for the agent's end-to-end tests: listens on a Unix
// stream socket in a fresh temporary directory, reads every connection's frames on a
// background thread and parses them with the generated classes. Finish() (after the
// profiled processes have exited) collects everything, including connections still
// waiting in the backlog, so results never depend on timing.
#pragma once

#include <pthread.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cilkprof/wire.pb.h"

namespace cilkprof::agent::testing {

struct ReceivedConnection {
  std::vector<wire::AgentMessage> messages;
  std::string error;  // empty when every byte parsed as whole frames
};

class TestReceiver {
 public:
  TestReceiver();
  ~TestReceiver();
  const std::string& socket_path() const { return socket_path_; }
  const std::string& dir() const { return dir_; }
  // Stops the reader and returns every connection, in the order they were accepted.
  std::vector<ReceivedConnection> Finish();

 private:
  static void* Loop(void* self);
  void AcceptAll();
  bool ReadSome(size_t connection);  // false at end of stream

  struct Connection {
    int fd;
    bool open;
    std::string bytes;
  };

  std::string dir_, socket_path_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  pthread_t thread_{};
  bool running_ = false;
  std::mutex mu_;
  std::vector<Connection> connections_;  // in accept order (fd numbers get reused)
  std::vector<ReceivedConnection> finished_;
};

// What one connection said, folded together.
struct ThreadTotals {
  uint32_t tid = 0, thread_index = 0;
  std::string name;
  bool exited = false;
  std::map<uint32_t, wire::NewNode> nodes;
  std::map<uint32_t, double> samples, work;  // per node
  uint64_t counter_samples = 0, partial_unwinds = 0, cpu_ns = 0;
  uint64_t unsampled_ns = 0, signal_blocked = 0;
  double total_samples() const;
  double total_work() const;
};

struct ProcessProfile {
  bool starts_with_hello = false;
  wire::Hello hello;
  std::map<uint32_t, wire::LoadModule> modules;
  std::map<uint32_t, ThreadTotals> threads;  // by tid
  bool has_goodbye = false;
  std::string goodbye_reason;
  uint64_t unseen_thread_cpu_ns = 0;
  std::vector<std::string> problems;  // protocol violations found while folding
};

ProcessProfile Fold(const std::vector<wire::AgentMessage>& messages);

}  // namespace cilkprof::agent::testing
