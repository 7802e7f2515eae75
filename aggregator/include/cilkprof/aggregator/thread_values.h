// Per-thread exclusive values of one connection (issue 16; docs/PROFILE_FORMAT.md
// "Per-thread values"): what each thread's own CCT contributed to every merged node,
// so that readers can show one profile per thread (speedscope) beside the merged one
// without a timeline.
//
// The session adds each thread's metric increments here as it adds them to the merged
// tree: one hash lookup per (thread, node) increment, so the merge stays linear. Each
// thread keeps only the nodes it has values at (sparse: a slot per node, the metrics
// in a row), so memory grows with the (thread, context) pairs the agents sent, which
// the agents held themselves. Build writes at most kMaxThreadColumns threads on their
// own (those with the most of the first metric, `samples`) and sums every other
// thread into one group, so a process with hundreds of threads adds at most 65 sparse
// tables to the file.
//
// Not thread-safe: owned by one Session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

class ThreadValueTable {
 public:
  using ThreadKey = std::pair<uint32_t, uint32_t>;  // (thread_index, tid)
  // Threads written on their own; the rest form one group.
  static constexpr size_t kMaxThreadColumns = 64;

  // The number of metrics (the Hello's); values beyond it are not kept.
  void set_metric_count(size_t count) { metric_count_ = count; }
  bool empty() const { return threads_.empty(); }

  // Adds `count` increments of thread `thread` at merged node `node`.
  void Add(const ThreadKey& thread, uint32_t node, const double* values, size_t count);
  // Adds another table whose merged nodes map through `node_map` (an exec chain's
  // earlier image, see Session::FoldExecPredecessor); equal thread keys are summed.
  void Fold(const ThreadValueTable& earlier, const std::vector<uint32_t>& node_map);
  // Continuous mode: returns the values merged since the last call, their nodes mapped
  // through `node_map` (old merged index -> the window's; 0 for a node the window
  // dropped, whose values are dropped too unless it is the root), and starts afresh.
  ThreadValueTable TakeWindow(const std::vector<uint32_t>& node_map);
  // Writes Profile.thread_values; `positions` gives each thread's index in
  // out->threads (threads not in it are left out).
  void Build(const std::map<ThreadKey, uint32_t>& positions, profile::Profile* out) const;

 private:
  struct Thread {
    std::unordered_map<uint32_t, uint32_t> slot_of;  // merged node -> slot
    std::vector<uint32_t> nodes;                     // slot -> merged node
    std::vector<double> values;                      // slot * metric_count_ + metric
  };
  double* Row(Thread& thread, uint32_t node);
  void WriteColumns(const Thread& thread, profile::ThreadValues* out) const;

  size_t metric_count_ = 0;
  std::map<ThreadKey, Thread> threads_;
};

}  // namespace cilkprof::aggregator
