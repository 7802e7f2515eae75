// The aggregator: accepts agents on a Unix stream socket (and optionally TCP), merges
// each process's per-thread CCTs, symbolizes, and writes one profile file per profiled
// process image (a fork child or an exec'd program is its own profile). Runs its I/O
// on its own thread (Boost.Asio). Embedded in `cilkprof run`; the daemon `cilkprofd`
// wraps the same class.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

// One profiled process image: the data of one agent connection.
struct ProcessKey {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string executable;
  uint32_t sequence = 0;  // 0 for the first connection the aggregator accepted, then 1, 2...
};

struct WrittenProfile {
  ProcessKey process;
  std::string path;             // empty if writing failed
  Status status;                // why writing failed
  profile::Totals totals;
  uint32_t threads = 0;
  double duration_s = 0;
};

struct AggregatorOptions {
  std::string unix_socket_path;  // required: created (0600) and removed at shutdown
  std::string tcp_endpoint;      // optional "host:port" to listen on as well
  size_t max_frame_bytes = 64u << 20;
  // Chooses where a process's profile goes; called on the aggregator thread when the
  // connection ends. Must return a path that does not exist yet.
  std::function<std::string(const ProcessKey&)> output_path;
  // Called after each profile is written (or fails to be).
  std::function<void(const WrittenProfile&)> on_written;
};

class Aggregator {
 public:
  static Result<std::unique_ptr<Aggregator>> Start(AggregatorOptions options);
  ~Aggregator();  // stops listening, finishes open sessions as in Finish(0)

  // Stops accepting; waits up to `drain` for open connections to end (an agent sends
  // its last delta at exit); sessions still open then are written with what they
  // have, marked "connection lost". Returns every profile written since Start.
  std::vector<WrittenProfile> Finish(std::chrono::milliseconds drain);

  uint64_t connections_accepted() const;
  uint64_t connections_dropped() const;  // for malformed, truncated or oversized data

 private:
  struct Impl;
  explicit Aggregator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cilkprof::aggregator
