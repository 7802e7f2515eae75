#include "delta_builder.h"

namespace cilkprof::agent {
namespace {

uint64_t TakeIncrement(const uint64_t* live, uint64_t* shadow) {
  const uint64_t now = CounterRead(live);
  const uint64_t increment = now - *shadow;
  *shadow = now;
  return increment;
}

}  // namespace

namespace {

NewNodeMsg Declaration(const ThreadCct& cct, uint32_t id, PcResolver* resolver) {
  const CctNode& n = cct.node(id);
  NewNodeMsg msg;
  msg.id = id;
  msg.parent = n.parent;
  msg.edge = static_cast<WireEdge>(n.edge);
  if (n.kind == NodeKind::kPartialUnwind) {
    msg.kind = WireFrameKind::kPartialUnwind;
  } else if (n.kind == NodeKind::kElided) {
    msg.kind = WireFrameKind::kElided;
  } else if (n.kind == NodeKind::kLock) {
    msg.kind = WireFrameKind::kLock;
    const ResolvedPc where = resolver->ResolveData(n.pc);
    msg.module_id = where.module_id;
    msg.offset = where.offset;
  } else {
    const ResolvedPc where = resolver->Resolve(n.pc);
    msg.module_id = where.module_id;
    msg.offset = where.offset;
  }
  return msg;
}

}  // namespace

void ThreadDeltaBuilder::DeclareSent(const ThreadCct& cct, PcResolver* resolver, std::vector<NewNodeMsg>* out) const {
  for (uint32_t id = 1; id < nodes_sent_; ++id) out->push_back(Declaration(cct, id, resolver));
}

void ThreadDeltaBuilder::BeginCycle() {
  metric_cursor_ = 0;  // node 0 (the root) may carry overhead with no logical context
  counters_done_ = false;
}

bool ThreadDeltaBuilder::Build(const ThreadCct& cct, const SampleCounters& counters,
                               PcResolver* resolver, size_t max_entries, ThreadDeltaMsg* out) {
  const uint32_t count = cct.published_count();
  while (nodes_sent_ < count && out->nodes.size() < max_entries) {
    const uint32_t id = nodes_sent_++;
    out->nodes.push_back(Declaration(cct, id, resolver));
  }
  for (auto& shadow : shadow_) {
    if (shadow.size() < nodes_sent_) shadow.resize(nodes_sent_, 0);
  }

  // Metrics of the nodes the receiver knows (only those: a metric may not precede its
  // node; the root, node 0, is always known).
  while (metric_cursor_ < nodes_sent_ && out->metrics.size() < max_entries) {
    const uint32_t id = metric_cursor_++;
    double values[kMetricCount];
    bool any = false;
    for (uint32_t m = 0; m < kMetricCount; ++m) {
      const uint64_t now = cct.metric(id, static_cast<MetricId>(m));
      const uint64_t increment = now - shadow_[m][id];
      shadow_[m][id] = now;
      values[m] = static_cast<double>(increment);
      any = any || increment != 0;
    }
    if (any) out->metrics.push_back(NodeMetricsMsg{id, std::vector<double>(values, values + kMetricCount)});
  }

  if (!counters_done_) {
    counters_done_ = true;
    out->counters.samples = TakeIncrement(&counters.samples, &shadow_counters_.samples);
    out->counters.partial_unwinds =
        TakeIncrement(&counters.partial_unwinds, &shadow_counters_.partial_unwinds);
    out->counters.dropped_reentrant =
        TakeIncrement(&counters.dropped_reentrant, &shadow_counters_.dropped_reentrant);
    out->counters.dropped_no_memory =
        TakeIncrement(&counters.dropped_no_memory, &shadow_counters_.dropped_no_memory);
    out->counters.cpu_ns = TakeIncrement(&counters.cpu_ns, &shadow_counters_.cpu_ns);
    out->counters.idle_samples = TakeIncrement(&counters.idle_samples, &shadow_counters_.idle_samples);
    out->counters.idle_ns = TakeIncrement(&counters.idle_ns, &shadow_counters_.idle_ns);
    out->counters.overhead_samples =
        TakeIncrement(&counters.overhead_samples, &shadow_counters_.overhead_samples);
    out->counters.unattributed_overhead =
        TakeIncrement(&counters.unattributed_overhead, &shadow_counters_.unattributed_overhead);
    out->counters.probe_samples = TakeIncrement(&counters.probe_samples, &shadow_counters_.probe_samples);
    out->counters.probe_partial = TakeIncrement(&counters.probe_partial, &shadow_counters_.probe_partial);
    out->counters.unsampled_ns = TakeIncrement(&counters.unsampled_ns, &shadow_counters_.unsampled_ns);
    out->counters.signal_blocked =
        TakeIncrement(&counters.signal_blocked, &shadow_counters_.signal_blocked);
    out->counters.deep_stacks = TakeIncrement(&counters.deep_stacks, &shadow_counters_.deep_stacks);
    out->counters.deep_stack_frames_elided =
        TakeIncrement(&counters.deep_stack_frames_elided, &shadow_counters_.deep_stack_frames_elided);
    out->counters.deepest_stack = TakeIncrement(&counters.deepest_stack, &shadow_counters_.deepest_stack);
    out->counters.lock_acquisitions =
        TakeIncrement(&counters.lock_acquisitions, &shadow_counters_.lock_acquisitions);
    out->counters.lock_contended = TakeIncrement(&counters.lock_contended, &shadow_counters_.lock_contended);
    out->counters.lock_wait_ns = TakeIncrement(&counters.lock_wait_ns, &shadow_counters_.lock_wait_ns);
    out->counters.lock_blame_ns = TakeIncrement(&counters.lock_blame_ns, &shadow_counters_.lock_blame_ns);
    out->counters.lock_unblamed_ns =
        TakeIncrement(&counters.lock_unblamed_ns, &shadow_counters_.lock_unblamed_ns);
    out->counters.lock_wait_open_ns =
        TakeIncrement(&counters.lock_wait_open_ns, &shadow_counters_.lock_wait_open_ns);
  }
  return nodes_sent_ == count && metric_cursor_ >= nodes_sent_;
}

}  // namespace cilkprof::agent
