#include "wire_messages.h"

#include "proto_writer.h"

namespace cilkprof::agent {
namespace {

// AgentMessage.body field numbers.
constexpr uint32_t kHelloField = 1, kDeltaField = 2, kGoodbyeField = 3;

void WriteMetricDescriptor(const MetricDescriptorMsg& m, ProtoWriter* w) {
  w->String(1, m.name);
  w->String(2, m.unit);
  w->String(3, m.description);
}

void WriteHello(const HelloMsg& h, ProtoWriter* w) {
  w->Varint(1, h.protocol_version);
  w->Varint(2, h.pid);
  w->Varint(3, h.ppid);
  w->String(4, h.executable);
  for (const std::string& arg : h.argv) w->RepeatedString(5, arg);
  w->String(6, h.clock);
  w->String(7, h.sample_source);
  w->Varint(8, h.period_ns);
  w->String(9, h.unwind_mode);
  for (const MetricDescriptorMsg& m : h.metrics) {
    ProtoWriter nested;
    WriteMetricDescriptor(m, &nested);
    w->Message(10, nested);
  }
  w->Varint(11, h.start_unix_ns);
  w->String(12, h.hostname);
  w->Varint(13, h.profiling_signal);
  for (const std::string& warning : h.warnings) w->RepeatedString(14, warning);
  w->Varint(15, h.unix_minus_monotonic_ns);
}

void WriteLoadModule(const LoadModuleMsg& m, ProtoWriter* w) {
  w->Varint(1, m.id);
  w->String(2, m.path);
  w->String(3, m.build_id);
  w->Varint(4, m.load_bias);
  w->Varint(5, m.start);
  w->Varint(6, m.end);
  w->Bool(7, m.unloaded);
}

void WriteNewNode(const NewNodeMsg& n, ProtoWriter* w) {
  w->Varint(1, n.id);
  w->Varint(2, n.parent);
  w->Varint(3, static_cast<uint32_t>(n.kind));
  w->Varint(4, n.module_id);
  w->Varint(5, n.offset);
  w->Varint(6, static_cast<uint32_t>(n.edge));
}

void WriteNodeMetrics(const NodeMetricsMsg& m, ProtoWriter* w) {
  w->Varint(1, m.node);
  w->PackedDoubles(2, m.values.data(), m.values.size());
}

void WriteCounters(const ThreadCountersMsg& c, ProtoWriter* w) {
  w->Varint(1, c.samples);
  w->Varint(2, c.partial_unwinds);
  w->Varint(3, c.dropped_reentrant);
  w->Varint(4, c.dropped_no_memory);
  w->Varint(5, c.cpu_ns);
  w->Varint(6, c.idle_samples);
  w->Varint(7, c.idle_ns);
  w->Varint(8, c.overhead_samples);
  w->Varint(9, c.unattributed_overhead);
  w->Varint(10, c.probe_samples);
  w->Varint(11, c.probe_partial);
  w->Varint(12, c.unsampled_ns);
  w->Varint(13, c.signal_blocked);
  w->Varint(14, c.deep_stacks);
  w->Varint(15, c.deep_stack_frames_elided);
  w->Varint(16, c.deepest_stack);
  w->Varint(17, c.lock_acquisitions);
  w->Varint(18, c.lock_contended);
  w->Varint(19, c.lock_wait_ns);
  w->Varint(20, c.lock_blame_ns);
  w->Varint(21, c.lock_unblamed_ns);
  w->Varint(22, c.lock_wait_open_ns);
}

void WriteLockDelta(const LockDeltaMsg& l, ProtoWriter* w) {
  w->Varint(1, l.module_id);
  w->Varint(2, l.offset);
  w->Varint(3, l.kind);
  w->Varint(4, l.contended);
  w->Varint(5, l.wait_ns);
  w->Varint(6, l.blame_ns);
  w->Varint(7, l.timeouts);
  w->Varint(8, l.acquisitions);
}

void WriteThreadDelta(const ThreadDeltaMsg& t, ProtoWriter* w) {
  w->Varint(1, t.tid);
  w->String(2, t.name);
  ProtoWriter nested;  // reused for every element: one allocation, not one per node
  for (const NewNodeMsg& n : t.nodes) {
    nested.Clear();
    WriteNewNode(n, &nested);
    w->Message(3, nested);
  }
  for (const NodeMetricsMsg& m : t.metrics) {
    nested.Clear();
    WriteNodeMetrics(m, &nested);
    w->Message(4, nested);
  }
  if (!t.counters.IsZero()) {
    nested.Clear();
    WriteCounters(t.counters, &nested);
    w->Message(5, nested);
  }
  w->Bool(6, t.exited);
  w->Varint(7, t.thread_index);
}

void WriteTimelineChunk(const TimelineChunkMsg& c, ProtoWriter* w) {
  w->Varint(1, c.tid);
  w->Varint(2, c.thread_index);
  w->PackedVarints(3, c.time_delta_ns.data(), c.time_delta_ns.size());
  w->PackedVarints(4, c.kind.data(), c.kind.size());
  w->PackedVarints(5, c.state.data(), c.state.size());
  w->PackedVarints(6, c.node.data(), c.node.size());
  w->Varint(7, c.dropped);
  w->Varint(8, c.worker_id_plus_1);
}

void WriteDelta(const DeltaMsg& d, ProtoWriter* w) {
  ProtoWriter nested;
  for (const LoadModuleMsg& m : d.modules) {
    nested.Clear();
    WriteLoadModule(m, &nested);
    w->Message(1, nested);
  }
  for (const ThreadDeltaMsg& t : d.threads) {
    nested.Clear();
    WriteThreadDelta(t, &nested);
    w->Message(2, nested);
  }
  w->Varint(3, d.flush_unix_ns);
  w->Varint(4, d.process_cpu_ns);
  for (const LockDeltaMsg& l : d.locks) {
    nested.Clear();
    WriteLockDelta(l, &nested);
    w->Message(17, nested);
  }
  for (const TimelineChunkMsg& c : d.timeline) {
    nested.Clear();
    WriteTimelineChunk(c, &nested);
    w->Message(18, nested);
  }
}

// Wraps a message body as AgentMessage field `field` and prefixes the frame length.
template <typename Msg, typename WriteFn>
std::string Frame(uint32_t field, const Msg& msg, WriteFn write) {
  ProtoWriter body;
  write(msg, &body);
  ProtoWriter agent_message;
  agent_message.Message(field, body);
  const std::string& payload = agent_message.bytes();
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  for (int b = 0; b < 4; ++b) frame.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
  frame.append(payload);
  return frame;
}

}  // namespace

std::string EncodeHelloFrame(const HelloMsg& hello) {
  return Frame(kHelloField, hello, WriteHello);
}
std::string EncodeDeltaFrame(const DeltaMsg& delta) {
  return Frame(kDeltaField, delta, WriteDelta);
}
std::string EncodeGoodbyeFrame(const GoodbyeMsg& goodbye) {
  return Frame(kGoodbyeField, goodbye, [](const GoodbyeMsg& g, ProtoWriter* w) {
    w->Varint(1, g.end_unix_ns);
    w->String(2, g.reason);
    w->Varint(3, g.unseen_thread_cpu_ns);
    w->String(4, g.runtime);
  });
}

size_t EncodedSizeBound(const ThreadDeltaMsg& thread) {
  // NewNode: 6 tags + 4 varint32 (5) + varint64 (10) + 2 small enums + tag/length = 40.
  // NodeMetrics: tags, node id, packed length and tag/length (<= 16) + 8 per value.
  size_t bytes = 64 + thread.name.size() + 40 * thread.nodes.size();
  for (const NodeMetricsMsg& m : thread.metrics) bytes += 16 + 8 * m.values.size();
  return bytes;
}

size_t EncodedSizeBound(const TimelineChunkMsg& chunk) {
  // Per event: a time delta (<= 10 bytes), kind and state (1 each), a node (<= 5).
  return 64 + 17 * chunk.time_delta_ns.size();
}

}  // namespace cilkprof::agent
