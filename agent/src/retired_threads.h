// What the threads that have ended recorded, kept for the rest of the process.
//
// A thread's record (its CCT and counters) is freed once its last delta is built.
// But the aggregator that received those deltas may die later (kill -9 of
// `cilkprof run` or of cilkprofd): the spill file the agent then starts must hold
// everything the process recorded, ended threads included (transport.h, "snapshot").
// So before a record is freed, its tree is folded into one retired tree, keyed like
// the aggregator's merge (parent, module, offset, frame kind, edge kind), with its
// metrics summed; a profile keeps per-node metrics merged across threads anyway, and
// per thread only its identity and counters, which are kept as they are. Memory is
// bounded by the distinct calling contexts of all ended threads, plus about 200
// bytes per ended thread.
//
// Pcs are resolved to (module, offset) when folded, while their module is loaded,
// and the modules they refer to are remembered, so that a snapshot can declare a
// module the table has since dropped (dlclose).
//
// Not signal-safe to change (flusher lock held); the crash path reads it, with the
// flusher lock held, through the const accessors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cct.h"
#include "module_table.h"
#include "thread_record.h"
#include "wire_messages.h"

namespace cilkprof::agent {

class RetiredThreads {
 public:
  struct Thread {
    uint32_t tid = 0;
    uint32_t thread_index = 0;
    std::string name;
    SampleCounters counters;  // totals
  };
  struct Node {
    uint32_t parent = 0;  // index into nodes()
    uint32_t module_id = 0;
    uint64_t offset = 0;
    NodeKind kind = NodeKind::kPc;
    uint8_t edge = 0;
    uint64_t metrics[kMetricCount] = {};
  };

  // Folds in an ended thread whose last delta has been built.
  void Add(const ThreadRecord& t, const std::string& name, ModuleTable* modules);

  const std::vector<Thread>& threads() const { return threads_; }
  const std::vector<Node>& nodes() const { return nodes_; }  // [0]: the root
  const std::vector<LoadModuleMsg>& modules() const { return modules_; }
  bool empty() const { return threads_.empty(); }

  // The snapshot's part for ended threads: one ThreadDelta per thread (full counters,
  // exited), the retired tree riding with the first. Appends to `delta`, calling
  // `emit` whenever it holds about `budget_bytes`.
  void AppendSnapshot(DeltaMsg* delta, size_t* delta_bytes, size_t budget_bytes, size_t max_batch,
                      const std::function<void()>& emit) const;

 private:
  struct Key {
    uint32_t parent;
    uint32_t module_id;
    uint64_t offset;
    uint8_t kind;
    uint8_t edge;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };

  void RememberModule(uint32_t id, const ModuleTable& table);

  std::vector<Thread> threads_;
  std::vector<Node> nodes_{Node{}};
  std::unordered_map<Key, uint32_t, KeyHash> index_;
  std::vector<LoadModuleMsg> modules_;
};

// The wire form of a thread's counter totals (for an ended thread's snapshot).
ThreadCountersMsg CountersMsg(const SampleCounters& c);

}  // namespace cilkprof::agent
