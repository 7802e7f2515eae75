// Turns what a thread's CCT holds now into increments since the previous delta.
//
// The flusher keeps, per thread, how many nodes it has sent and a shadow copy of every
// metric value and counter it has reported; each Build() sends new nodes (ids only
// grow and a parent's id is always smaller than its child's, so parents go first) and
// the differences between the live values and the shadows. The CCT's owner thread
// keeps writing meanwhile; values read mid-update are simply reported by the next
// delta, so the increments of any number of deltas add up to the live totals.
// Not signal-safe; one builder per thread record, used under the flusher's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cct.h"
#include "wire_messages.h"

namespace cilkprof::agent {

struct ResolvedPc {
  uint32_t module_id = 0;  // 0: unknown, offset is then the absolute address
  uint64_t offset = 0;
};

// Maps a raw pc to (load module, ELF virtual address). The module table implements it.
class PcResolver {
 public:
  virtual ~PcResolver() = default;
  virtual ResolvedPc Resolve(uintptr_t pc) = 0;
  // A data address (a lock object, issue 14): module-relative when it lies in one of a
  // module's segments, else module 0 and the address itself.
  virtual ResolvedPc ResolveData(uintptr_t address) { return ResolvedPc{0, address}; }
};

class ThreadDeltaBuilder {
 public:
  // Starts a flush: the next Build() calls scan every node's metrics once again.
  void BeginCycle();
  // Appends at most `max_entries` new nodes and `max_entries` metric entries (and, in
  // the first call of a cycle, the counter increments) to `out`. Returns true once
  // everything the tree held at the start of this call has been reported this cycle;
  // false means: call again with a fresh `out` (the caller sends `out` first).
  bool Build(const ThreadCct& cct, const SampleCounters& counters, PcResolver* resolver,
             size_t max_entries, ThreadDeltaMsg* out);
  // A new connection knows none of the nodes: send them all again (metric shadows are
  // kept: increments already delivered are not repeated).
  void ResendNodes() { nodes_sent_ = 1; }
  // The declarations of every node sent so far, for a receiver that has none of them
  // (a spill file started mid-connection must stand alone). Changes no state.
  void DeclareSent(const ThreadCct& cct, PcResolver* resolver, std::vector<NewNodeMsg>* out) const;
  uint32_t nodes_sent() const { return nodes_sent_; }
  // What has been reported of node `id`'s metric `m`, and of the counters: the crash
  // path (crash_flush.h) reports the rest. Reading them is async-signal-safe.
  uint64_t reported_metric(uint32_t id, MetricId m) const {
    return id < shadow_[m].size() ? shadow_[m][id] : 0;
  }
  const SampleCounters& reported_counters() const { return shadow_counters_; }

 private:
  uint32_t nodes_sent_ = 1;  // node 0, the root, is implicit
  uint32_t metric_cursor_ = 0;
  bool counters_done_ = false;
  std::vector<uint64_t> shadow_[kMetricCount];
  SampleCounters shadow_counters_;
};

}  // namespace cilkprof::agent
