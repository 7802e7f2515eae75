// Plain C++ mirrors of the messages of proto/cilkprof/wire.proto that the agent sends,
// and their encoding into frames (uint32 little-endian length, then one serialized
// cilkprof.wire.AgentMessage). Field numbers and meanings: see wire.proto; keep both
// in step. Not signal-safe: used by the flusher thread and the exit/exec/fork paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cilkprof::agent {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kMaxFrameBytes = 64u << 20;  // the aggregator's limit

enum class WireFrameKind : uint32_t { kPc = 0, kPartialUnwind = 1, kElided = 2, kLock = 3 };
enum class WireEdge : uint32_t { kCall = 0, kSpawn = 1, kTask = 2 };  // wire.EdgeKind

struct MetricDescriptorMsg {
  std::string name, unit, description;
};

struct HelloMsg {
  uint32_t protocol_version = kProtocolVersion;
  uint32_t pid = 0, ppid = 0;
  std::string executable;
  std::vector<std::string> argv;
  std::string clock, sample_source;
  uint64_t period_ns = 0;
  std::string unwind_mode;
  std::vector<MetricDescriptorMsg> metrics;
  uint64_t start_unix_ns = 0;
  std::string hostname;
  uint32_t profiling_signal = 0;
  std::vector<std::string> warnings;
  uint64_t unix_minus_monotonic_ns = 0;  // the timeline's clock offset (issue 16)
};

struct LoadModuleMsg {
  uint32_t id = 0;
  std::string path;
  std::string build_id;  // raw bytes
  uint64_t load_bias = 0, start = 0, end = 0;
  bool unloaded = false;
};

struct NewNodeMsg {
  uint32_t id = 0, parent = 0;
  WireFrameKind kind = WireFrameKind::kPc;
  uint32_t module_id = 0;
  uint64_t offset = 0;
  WireEdge edge = WireEdge::kCall;
};

struct NodeMetricsMsg {
  uint32_t node = 0;
  std::vector<double> values;
};

struct ThreadCountersMsg {
  uint64_t samples = 0, partial_unwinds = 0, dropped_reentrant = 0, dropped_no_memory = 0,
           cpu_ns = 0;
  uint64_t idle_samples = 0, idle_ns = 0, overhead_samples = 0, unattributed_overhead = 0,
           probe_samples = 0, probe_partial = 0;
  uint64_t unsampled_ns = 0, signal_blocked = 0;
  uint64_t deep_stacks = 0, deep_stack_frames_elided = 0, deepest_stack = 0;
  uint64_t lock_acquisitions = 0, lock_contended = 0, lock_wait_ns = 0, lock_blame_ns = 0,
           lock_unblamed_ns = 0, lock_wait_open_ns = 0;
  bool IsZero() const {
    return samples == 0 && partial_unwinds == 0 && dropped_reentrant == 0 &&
           dropped_no_memory == 0 && cpu_ns == 0 && idle_samples == 0 && idle_ns == 0 &&
           overhead_samples == 0 && unattributed_overhead == 0 && probe_samples == 0 &&
           probe_partial == 0 && unsampled_ns == 0 && signal_blocked == 0 && deep_stacks == 0 &&
           deep_stack_frames_elided == 0 && deepest_stack == 0 && lock_acquisitions == 0 &&
           lock_contended == 0 && lock_wait_ns == 0 && lock_blame_ns == 0 &&
           lock_unblamed_ns == 0 && lock_wait_open_ns == 0;
  }
};

struct ThreadDeltaMsg {
  uint32_t tid = 0;
  std::string name;
  std::vector<NewNodeMsg> nodes;
  std::vector<NodeMetricsMsg> metrics;
  ThreadCountersMsg counters;
  bool exited = false;
  uint32_t thread_index = 0;
};

// One lock's exact totals since the previous Delta (wire LockDelta, issue 14).
struct LockDeltaMsg {
  uint32_t module_id = 0;
  uint64_t offset = 0;
  uint32_t kind = 0;  // wire LockKind
  uint64_t contended = 0, wait_ns = 0, blame_ns = 0, timeouts = 0;
  uint64_t acquisitions = 0;  // estimated: wire.proto LockDelta
};

// One thread's new timeline events (wire TimelineChunk, issue 16): parallel arrays,
// oldest first, the first time absolute (CLOCK_MONOTONIC), then increases.
struct TimelineChunkMsg {
  uint32_t tid = 0, thread_index = 0;
  std::vector<uint64_t> time_delta_ns;
  std::vector<uint32_t> kind, state, node;
  uint64_t dropped = 0;
  uint32_t worker_id_plus_1 = 0;
};

struct DeltaMsg {
  std::vector<LoadModuleMsg> modules;
  std::vector<ThreadDeltaMsg> threads;
  std::vector<LockDeltaMsg> locks;
  std::vector<TimelineChunkMsg> timeline;
  uint64_t flush_unix_ns = 0;   // when the flush that built it ran
  uint64_t process_cpu_ns = 0;  // the process's CPU time then
};

struct GoodbyeMsg {
  uint64_t end_unix_ns = 0;
  std::string reason;
  uint64_t unseen_thread_cpu_ns = 0;
  std::string runtime;  // the attached runtime's name; empty: none attached
};

// Each returns one complete frame: the 4-byte length prefix, then AgentMessage.
std::string EncodeHelloFrame(const HelloMsg& hello);
std::string EncodeDeltaFrame(const DeltaMsg& delta);
std::string EncodeGoodbyeFrame(const GoodbyeMsg& goodbye);

// An upper bound of the encoded size of one ThreadDelta, for splitting a large delta
// into frames below kMaxFrameBytes without encoding it twice.
size_t EncodedSizeBound(const ThreadDeltaMsg& thread);
size_t EncodedSizeBound(const TimelineChunkMsg& chunk);

}  // namespace cilkprof::agent
