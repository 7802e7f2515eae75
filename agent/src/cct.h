// The per-thread calling-context tree (CCT) the signal handler writes into.
//
// Signal-safety contract:
//   * Init() and Destroy() are NOT async-signal-safe; they run on ordinary threads.
//   * FindOrInsertChild(), AddMetric() and RecordSample() ARE async-signal-safe when
//     called by the owner thread (the thread whose samples the tree holds) and by
//     nobody else: they never call malloc or take a lock. They may call mmap (to map
//     a new arena chunk or a larger hash index) and munmap, both plain system calls.
//     Their time is bounded by the path's length, not by the tree's size: the index
//     grows incrementally (below).
//   * Exactly one writer: the owner thread (its signal handler, or its own code with
//     the handler kept out). Any other thread (the flusher) may read concurrently:
//     published_count() with acquire, then the nodes below it and the metric columns
//     of those nodes. Node creation is published with a release store of the count,
//     after the node's fields are written; metric values are written with relaxed
//     atomic stores (the owner is the only writer, so no read-modify-write is needed).
//
// Memory is bounded by the number of distinct contexts, never by the number of
// samples: a sample on an existing path touches no new memory. Nodes live in mmap'd
// chunks of kChunkNodes; the tree holds at most max_nodes nodes (node 0 is the root).
// When it is full, a sample that needs a new node is dropped and counted.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cilkprof/unwinder/unwinder.h"

namespace cilkprof::agent {

// Metric columns, in the order of Hello.metrics. To add a metric: add it here, to
// kMetricInfo (metrics.h), and write it in the handler.
enum MetricId : uint32_t {
  kMetricSamples = 0,
  kMetricWork = 1,
  kMetricIdleness = 2,
  kMetricOverhead = 3,
  kMetricProbe = 4,
  kMetricInstrumentation = 5,
  kMetricLockWait = 6,   // issue 14: on FRAME_LOCK leaves only (locks/)
  kMetricLockBlame = 7,
  kMetricCount = 8
};

inline constexpr uint32_t kNoNode = 0xffffffffu;
inline constexpr uint32_t kRootNode = 0;
inline constexpr uint32_t kChunkNodes = 4096;

// kElided: the middle of a stack deeper than the frame buffer (docs/UNWINDER.md "Deep
// stacks"); its parent is the outermost kept part, its children the innermost. One
// node per parent, whatever the number of frames elided (counted in SampleCounters).
// kLock: a lock object (issue 14, wire FRAME_LOCK), a leaf under the context of a lock
// call that waited or of an unlock that handed out blame; `pc` is the lock's address.
// The values match the wire's FrameKind.
enum class NodeKind : uint8_t { kPc = 0, kPartialUnwind = 1, kElided = 2, kLock = 3 };

// One CCT node. Metrics are not in it: they live in columnar arrays indexed by node id
// so that adding a metric never changes this layout.
struct CctNode {
  uintptr_t pc;        // raw runtime pc (0 for the partial-unwind marker)
  uint32_t parent;     // node id
  uint32_t hash_next;  // next node id in the same hash bucket, 0 = end of chain
  NodeKind kind;
  uint8_t edge;        // unwinder::Edge: how this node was entered from its parent
};
static_assert(sizeof(CctNode) <= 48, "a CCT node must stay within 48 bytes (issue 2)");
static_assert(sizeof(CctNode) == 24, "docs/AGENT.md states the node size; update it");

// Per-thread event counters. Same single-writer rule as the metric columns.
struct SampleCounters {
  uint64_t samples = 0;            // samples recorded in the tree
  uint64_t partial_unwinds = 0;    // of those, kept under the partial-unwind marker
  uint64_t dropped_reentrant = 0;  // arrived while the handler was already running
  uint64_t dropped_no_memory = 0;  // the tree was full
  uint64_t cpu_ns = 0;             // sum of the recorded samples' weights
  // Blame (issue 4). Idle samples are not in the tree and not in `samples`.
  uint64_t idle_samples = 0;           // taken while the worker was IDLE
  uint64_t idle_ns = 0;                // their total weight
  uint64_t overhead_samples = 0;       // in the tree, taken in the OVERHEAD state
  uint64_t unattributed_overhead = 0;  // of those, recorded at the root (no context)
  uint64_t probe_samples = 0;          // cilkprof_probe(); metric `probe` only
  uint64_t probe_partial = 0;          // of those, with a partial path
  // Deep stacks (docs/UNWINDER.md): samples with frames elided in the middle (in the
  // tree under a kElided node; those deeper than the walk's bound also under the
  // partial-unwind marker), the frames elided in all, and the deepest stack walked
  // (a maximum, which only grows: its increments add up to it like any counter's).
  uint64_t deep_stacks = 0;
  uint64_t deep_stack_frames_elided = 0;
  uint64_t deepest_stack = 0;
  // Unsampled time (unsampled.h): written once, when the thread ends or at the final
  // flush, under the registry lock; never by the handler.
  uint64_t unsampled_ns = 0;    // the thread's clock after its last sample
  uint64_t signal_blocked = 0;  // 1: the sampling signal was blocked in it then
  // Locks (issue 14, locks/; wire ThreadCounters.lock_*): written by the thread itself
  // in the interposed lock functions (lock_acquisitions with a single add instruction:
  // a signal handler on the thread may lock between a load and a store), never by the
  // sampling handler; lock_wait_open_ns once, by the final flush.
  uint64_t lock_acquisitions = 0;
  uint64_t lock_contended = 0;
  uint64_t lock_wait_ns = 0;
  uint64_t lock_blame_ns = 0;
  uint64_t lock_unblamed_ns = 0;
  uint64_t lock_wait_open_ns = 0;
};

// Relaxed single-writer counter helpers (readers on other threads never see a torn value).
inline void CounterAdd(uint64_t* counter, uint64_t value) {
  __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + value, __ATOMIC_RELAXED);
}
inline uint64_t CounterRead(const uint64_t* counter) {
  return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

struct CctOptions {
  uint32_t max_nodes = 1u << 20;   // including the root
  uint32_t initial_buckets = 4096; // power of two
  bool grow_index = true;          // tests turn this off to force collisions
};

class ThreadCct {
 public:
  ThreadCct() = default;
  ThreadCct(const ThreadCct&) = delete;
  ThreadCct& operator=(const ThreadCct&) = delete;
  ~ThreadCct() { Destroy(); }

  // Maps the chunk table, the first chunk and the hash index. False if mmap fails.
  bool Init(const CctOptions& options);
  void Destroy();

  // Returns the child of `parent` with this key, creating it if needed; kNoNode when
  // the tree is full (or a chunk cannot be mapped). Owner only, signal-safe.
  uint32_t FindOrInsertChild(uint32_t parent, uintptr_t pc, NodeKind kind, uint8_t edge);
  // Owner only, signal-safe.
  void AddMetric(uint32_t node, MetricId metric, uint64_t value) {
    CounterAdd(MetricSlot(node, metric), value);
  }

  // Any thread. Nodes [0, published_count()) are readable.
  uint32_t published_count() const { return __atomic_load_n(&count_, __ATOMIC_ACQUIRE); }
  const CctNode& node(uint32_t id) const { return Nodes(id / kChunkNodes)[id % kChunkNodes]; }
  uint64_t metric(uint32_t id, MetricId metric) const {
    return CounterRead(const_cast<ThreadCct*>(this)->MetricSlot(id, metric));
  }
  uint32_t max_nodes() const { return max_nodes_; }
  size_t mapped_bytes() const { return mapped_bytes_; }
  // The index's size, and whether nodes are moving to a doubled table (for tests).
  uint32_t index_buckets() const { return 1u << bucket_bits_; }
  bool index_growing() const { return old_buckets_ != nullptr; }

  static constexpr size_t kChunkBytes =
      kChunkNodes * (sizeof(CctNode) + kMetricCount * sizeof(uint64_t));

 private:
  CctNode* Nodes(uint32_t chunk) const { return static_cast<CctNode*>(chunks_[chunk]); }
  uint64_t* MetricSlot(uint32_t id, MetricId metric) {
    char* base = static_cast<char*>(chunks_[id / kChunkNodes]);
    uint64_t* column = reinterpret_cast<uint64_t*>(base + kChunkNodes * sizeof(CctNode)) +
                       size_t{metric} * kChunkNodes;
    return column + id % kChunkNodes;
  }
  // The hash index (owner only; readers never look at it). Chains are linked through
  // CctNode::hash_next. When it holds more than one node per bucket it doubles, and
  // the nodes move to the doubled table one old bucket per insert (incremental
  // rehashing, as in Redis' dict), never all at once: no sample pauses for the whole
  // tree (issue 12, row 9a). While nodes move, old bucket b (which splits into new
  // buckets 2b and 2b+1) is still the one to search when b >= moved_.
  static uint64_t Hash(uint32_t parent, uintptr_t pc, NodeKind kind, uint8_t edge);
  static uint32_t IndexOf(uint64_t hash, uint32_t bits) {
    return bits == 0 ? 0 : static_cast<uint32_t>(hash >> (64 - bits));
  }
  // The chain head a key with this hash lives in (old or new table).
  uint32_t* HeadFor(uint64_t hash);
  void MaybeGrowIndex();
  void MoveBucket();
  void UnmapOldIndexFrom(uint32_t first_bucket);
  void Prefetch(uint32_t old_bucket) const;
  static constexpr size_t kPageBytes = 4096;
  static constexpr uint32_t kBucketsPerPage = kPageBytes / sizeof(uint32_t);

  void** chunks_ = nullptr;  // chunk table, chunk_slots_ entries
  uint32_t chunk_slots_ = 0;
  uint32_t* buckets_ = nullptr;      // the current (while growing: the doubled) table
  uint32_t bucket_bits_ = 0;
  uint32_t* old_buckets_ = nullptr;  // while growing: the table being emptied
  uint32_t old_bits_ = 0;
  uint32_t moved_ = 0;               // old buckets emptied so far
  uint32_t count_ = 0;  // nodes in use, published with release
  uint32_t max_nodes_ = 0;
  bool grow_index_ = true;
  size_t mapped_bytes_ = 0;
};

// Inserts the path of `frames` (innermost first) from the root, under the
// partial-unwind marker when `partial` (or when no frame was found and `empty_is_root`
// is false); returns the leaf, or kNoNode when the tree is full (nothing is counted).
// `empty_is_root`: a path without frames is the root itself (overhead samples with no
// logical context). Owner only, async-signal-safe.
// `gap` (deep stacks, unwinder::LogicalResult): when below kNoGap, an elided-frames
// node goes between frames[gap] (or the marker/root, when gap == depth) and
// frames[gap - 1].
inline constexpr uint32_t kNoGap = 0xffffffffu;
uint32_t InsertPath(ThreadCct* cct, const unwinder::Frame* frames, uint32_t depth, bool partial,
                    bool empty_is_root = false, uint32_t gap = kNoGap);

// Inserts one sample: the path of `frames` (innermost first, as Unwind returns them)
// from the root, under the partial-unwind marker when `partial` (or when no frame was
// found), then adds samples += 1 and work += weight_ns at the leaf and updates the
// counters. Returns false (and counts dropped_no_memory) when the tree is full.
// Owner only, async-signal-safe.
bool RecordSample(ThreadCct* cct, SampleCounters* counters, const unwinder::Frame* frames,
                  uint32_t depth, bool partial, uint64_t weight_ns);

}  // namespace cilkprof::agent
