#include "retired_threads.h"

#include <algorithm>

namespace cilkprof::agent {

size_t RetiredThreads::KeyHash::operator()(const Key& k) const {
  uint64_t h = k.offset * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{k.parent} << 32 | k.module_id) * 0xC2B2AE3D27D4EB4Full;
  h ^= (uint64_t{k.kind} << 8 | k.edge) + (h >> 29);
  return static_cast<size_t>(h);
}

ThreadCountersMsg CountersMsg(const SampleCounters& c) {
  ThreadCountersMsg m;
  m.samples = CounterRead(&c.samples);
  m.partial_unwinds = CounterRead(&c.partial_unwinds);
  m.dropped_reentrant = CounterRead(&c.dropped_reentrant);
  m.dropped_no_memory = CounterRead(&c.dropped_no_memory);
  m.cpu_ns = CounterRead(&c.cpu_ns);
  m.idle_samples = CounterRead(&c.idle_samples);
  m.idle_ns = CounterRead(&c.idle_ns);
  m.overhead_samples = CounterRead(&c.overhead_samples);
  m.unattributed_overhead = CounterRead(&c.unattributed_overhead);
  m.probe_samples = CounterRead(&c.probe_samples);
  m.probe_partial = CounterRead(&c.probe_partial);
  m.unsampled_ns = CounterRead(&c.unsampled_ns);
  m.signal_blocked = CounterRead(&c.signal_blocked);
  m.deep_stacks = CounterRead(&c.deep_stacks);
  m.deep_stack_frames_elided = CounterRead(&c.deep_stack_frames_elided);
  m.deepest_stack = CounterRead(&c.deepest_stack);
  m.lock_acquisitions = CounterRead(&c.lock_acquisitions);
  m.lock_contended = CounterRead(&c.lock_contended);
  m.lock_wait_ns = CounterRead(&c.lock_wait_ns);
  m.lock_blame_ns = CounterRead(&c.lock_blame_ns);
  m.lock_unblamed_ns = CounterRead(&c.lock_unblamed_ns);
  m.lock_wait_open_ns = CounterRead(&c.lock_wait_open_ns);
  return m;
}

void RetiredThreads::RememberModule(uint32_t id, const ModuleTable& table) {
  if (id == 0) return;
  if (std::any_of(modules_.begin(), modules_.end(), [&](const LoadModuleMsg& m) { return m.id == id; })) {
    return;
  }
  for (const ModuleInfo& m : table.modules()) {
    if (m.id != id) continue;
    modules_.push_back(LoadModuleMsg{m.id, m.path, m.build_id, m.load_bias, m.start, m.end, false});
    return;
  }
}

void RetiredThreads::Add(const ThreadRecord& t, const std::string& name, ModuleTable* modules) {
  Thread thread;
  thread.tid = static_cast<uint32_t>(t.tid);
  thread.thread_index = t.thread_index;
  thread.name = name;
  thread.counters = t.counters;
  threads_.push_back(std::move(thread));

  const ThreadCct& cct = t.cct;
  const uint32_t count = cct.published_count();
  std::vector<uint32_t> retired(count, 0);  // the thread's node id -> retired index
  for (uint32_t id = 0; id < count; ++id) {
    uint32_t at = 0;  // the root stays the root
    if (id != kRootNode) {
      const CctNode& n = cct.node(id);
      Key key{retired[n.parent], 0, 0, static_cast<uint8_t>(n.kind), n.edge};
      if (n.kind == NodeKind::kPc || n.kind == NodeKind::kLock) {
        const ResolvedPc where =
            n.kind == NodeKind::kPc ? modules->Resolve(n.pc) : modules->ResolveData(n.pc);
        key.module_id = where.module_id;
        key.offset = where.offset;
        RememberModule(where.module_id, *modules);
      }
      auto [it, inserted] = index_.emplace(key, static_cast<uint32_t>(nodes_.size()));
      if (inserted) {
        Node node;
        node.parent = key.parent;
        node.module_id = key.module_id;
        node.offset = key.offset;
        node.kind = n.kind;
        node.edge = n.edge;
        nodes_.push_back(node);
      }
      at = it->second;
    }
    retired[id] = at;
    for (uint32_t m = 0; m < kMetricCount; ++m) {
      nodes_[at].metrics[m] += cct.metric(id, static_cast<MetricId>(m));
    }
  }
}

void RetiredThreads::AppendSnapshot(DeltaMsg* delta, size_t* delta_bytes, size_t budget_bytes,
                                    size_t max_batch, const std::function<void()>& emit) const {
  if (threads_.empty()) return;
  // The tree, in batches, under the first ended thread's identity. Parents come
  // before children (indexes grow as nodes are folded in, parents first).
  const Thread& carrier = threads_.front();
  size_t from = 1;
  do {
    ThreadDeltaMsg d;
    d.tid = carrier.tid;
    d.thread_index = carrier.thread_index;
    const size_t to = std::min(nodes_.size(), from + max_batch);
    for (size_t id = from; id < to; ++id) {
      const Node& n = nodes_[id];
      NewNodeMsg node;
      node.id = static_cast<uint32_t>(id);
      node.parent = n.parent;
      node.kind = n.kind == NodeKind::kPartialUnwind ? WireFrameKind::kPartialUnwind
                  : n.kind == NodeKind::kElided      ? WireFrameKind::kElided
                  : n.kind == NodeKind::kLock        ? WireFrameKind::kLock
                                                     : WireFrameKind::kPc;
      node.module_id = n.module_id;
      node.offset = n.offset;
      node.edge = static_cast<WireEdge>(n.edge);
      d.nodes.push_back(node);
    }
    // The metrics of this batch's nodes, and the root's with the first batch.
    for (size_t id = from == 1 ? 0 : from; id < to; ++id) {
      const uint64_t* metrics = nodes_[id].metrics;
      if (std::all_of(metrics, metrics + kMetricCount, [](uint64_t v) { return v == 0; })) continue;
      NodeMetricsMsg values{static_cast<uint32_t>(id), {}};
      for (uint32_t m = 0; m < kMetricCount; ++m) values.values.push_back(static_cast<double>(metrics[m]));
      d.metrics.push_back(std::move(values));
    }
    *delta_bytes += EncodedSizeBound(d);
    delta->threads.push_back(std::move(d));
    if (*delta_bytes >= budget_bytes) emit();
    from = to;
  } while (from < nodes_.size());
  // Each thread's identity, counters and end.
  for (const Thread& t : threads_) {
    ThreadDeltaMsg d;
    d.tid = t.tid;
    d.thread_index = t.thread_index;
    d.name = t.name;
    d.counters = CountersMsg(t.counters);
    d.exited = true;
    *delta_bytes += EncodedSizeBound(d);
    delta->threads.push_back(std::move(d));
    if (*delta_bytes >= budget_bytes) emit();
  }
}

}  // namespace cilkprof::agent
