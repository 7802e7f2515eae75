#include "cct.h"

#include <sys/mman.h>

namespace cilkprof::agent {
namespace {

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

uint32_t Log2(uint32_t power_of_two) {
  uint32_t bits = 0;
  while ((1u << bits) < power_of_two) ++bits;
  return bits;
}

}  // namespace

bool ThreadCct::Init(const CctOptions& options) {
  Destroy();
  max_nodes_ = options.max_nodes < 2 ? 2 : options.max_nodes;
  grow_index_ = options.grow_index;
  chunk_slots_ = (max_nodes_ + kChunkNodes - 1) / kChunkNodes;
  chunks_ = static_cast<void**>(MapZeroed(chunk_slots_ * sizeof(void*)));
  bucket_bits_ = Log2(options.initial_buckets == 0 ? 1 : options.initial_buckets);
  buckets_ = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) << bucket_bits_));
  if (chunks_ == nullptr || buckets_ == nullptr) {
    Destroy();
    return false;
  }
  chunks_[0] = MapZeroed(kChunkBytes);
  if (chunks_[0] == nullptr) {
    Destroy();
    return false;
  }
  mapped_bytes_ = chunk_slots_ * sizeof(void*) + (sizeof(uint32_t) << bucket_bits_) + kChunkBytes;
  // Node 0 is the root: zeroed memory already says pc 0, parent 0, kind kPc.
  __atomic_store_n(&count_, 1u, __ATOMIC_RELEASE);
  return true;
}

void ThreadCct::Destroy() {
  if (chunks_ != nullptr) {
    for (uint32_t i = 0; i < chunk_slots_; ++i) {
      if (chunks_[i] != nullptr) munmap(chunks_[i], kChunkBytes);
    }
    munmap(chunks_, chunk_slots_ * sizeof(void*));
  }
  if (buckets_ != nullptr) munmap(buckets_, sizeof(uint32_t) << bucket_bits_);
  if (old_buckets_ != nullptr) {
    // The pages below the last page boundary passed are unmapped already.
    UnmapOldIndexFrom(moved_ / kBucketsPerPage * kBucketsPerPage);
  }
  chunks_ = nullptr;
  buckets_ = nullptr;
  old_buckets_ = nullptr;
  chunk_slots_ = 0;
  count_ = 0;
  mapped_bytes_ = 0;
}

uint64_t ThreadCct::Hash(uint32_t parent, uintptr_t pc, NodeKind kind, uint8_t edge) {
  uint64_t h = (uint64_t{pc} * 0x9E3779B97F4A7C15ull) ^
               ((uint64_t{parent} << 3 | uint64_t(kind) << 1 | edge) * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return h;
}

uint32_t* ThreadCct::HeadFor(uint64_t hash) {
  if (old_buckets_ != nullptr) {
    const uint32_t old = IndexOf(hash, old_bits_);
    if (old >= moved_) return &old_buckets_[old];
  }
  return &buckets_[IndexOf(hash, bucket_bits_)];
}

uint32_t ThreadCct::FindOrInsertChild(uint32_t parent, uintptr_t pc, NodeKind kind,
                                      uint8_t edge) {
  uint32_t* head = HeadFor(Hash(parent, pc, kind, edge));
  for (uint32_t id = *head; id != 0;) {
    const CctNode& n = node(id);
    if (n.pc == pc && n.parent == parent && n.kind == kind && n.edge == edge) return id;
    id = n.hash_next;
  }
  const uint32_t id = count_;  // owner thread: plain read of its own counter
  if (id >= max_nodes_) return kNoNode;
  const uint32_t chunk = id / kChunkNodes;
  if (chunks_[chunk] == nullptr) {
    void* memory = MapZeroed(kChunkBytes);  // a system call; no malloc in the handler
    if (memory == nullptr) return kNoNode;
    chunks_[chunk] = memory;
    mapped_bytes_ += kChunkBytes;
  }
  CctNode& n = Nodes(chunk)[id % kChunkNodes];
  n.pc = pc;
  n.parent = parent;
  n.kind = kind;
  n.edge = edge;
  n.hash_next = *head;
  *head = id;
  __atomic_store_n(&count_, id + 1, __ATOMIC_RELEASE);  // publish to the flusher
  MaybeGrowIndex();
  return id;
}

namespace {
// How many old buckets ahead of the one being moved have their first node fetched.
constexpr uint32_t kPrefetchAhead = 8;
}  // namespace

// Keeps chains short (at most one node per bucket on average): past that, a table of
// twice the size is mapped (mmap, a system call; its pages are touched in order as
// nodes move in) and the nodes move to it one old bucket per insert. Moving ends after
// as many inserts as the old table has buckets, exactly when the doubled table is full
// in its turn, so at most one move is ever in progress (a move that starts late, after
// a failed mmap, only delays the next one). The nodes of a bucket are scattered over
// the tree, so each read is a cache miss: the first node of the bucket kPrefetchAhead
// places ahead is fetched in advance. Measured with bench/agent/cct_growth.cc
// (docs/PERFORMANCE.md, "CCT growth"): two nodes per bucket, or two buckets per
// insert, made both the total and a deep sample's worst case longer; building the
// doubled table in node order (sequential reads) front-loaded its page faults into
// the first samples after the doubling (0.7 ms each).
void ThreadCct::MaybeGrowIndex() {
  if (old_buckets_ != nullptr) {
    MoveBucket();
    return;
  }
  if (!grow_index_ || count_ <= (1u << bucket_bits_) || bucket_bits_ >= 31) return;
  const uint32_t new_bits = bucket_bits_ + 1;
  auto* fresh = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) << new_bits));
  if (fresh == nullptr) return;  // keep the old index: longer chains, still correct
  old_buckets_ = buckets_;
  old_bits_ = bucket_bits_;
  moved_ = 0;
  buckets_ = fresh;
  bucket_bits_ = new_bits;
  mapped_bytes_ += sizeof(uint32_t) << new_bits;
  for (uint32_t b = 1; b < kPrefetchAhead; ++b) Prefetch(b);
  MoveBucket();
}

void ThreadCct::Prefetch(uint32_t old_bucket) const {
  if (old_bucket >= (1u << old_bits_)) return;
  const uint32_t id = old_buckets_[old_bucket];
  if (id != 0) __builtin_prefetch(&Nodes(id / kChunkNodes)[id % kChunkNodes], 1);
}

// Moves the chain of the next old bucket to the doubled table (old bucket b feeds new
// buckets 2b and 2b+1, which only it feeds). The old table is unmapped a page at a
// time as its buckets empty: unmapping 2 MiB at once took 200 us.
void ThreadCct::MoveBucket() {
  const uint32_t old_size = 1u << old_bits_;
  Prefetch(moved_ + kPrefetchAhead);
  for (uint32_t id = old_buckets_[moved_]; id != 0;) {
    CctNode& n = Nodes(id / kChunkNodes)[id % kChunkNodes];
    const uint32_t next = n.hash_next;
    uint32_t& head = buckets_[IndexOf(Hash(n.parent, n.pc, n.kind, n.edge), bucket_bits_)];
    n.hash_next = head;
    head = id;
    id = next;
  }
  ++moved_;
  if (moved_ % kBucketsPerPage == 0 && moved_ < old_size) {
    munmap(old_buckets_ + (moved_ - kBucketsPerPage), kPageBytes);
    mapped_bytes_ -= kPageBytes;
  }
  if (moved_ == old_size) {
    UnmapOldIndexFrom(old_size > kBucketsPerPage ? old_size - kBucketsPerPage : 0);
    old_buckets_ = nullptr;
  }
}

// Unmaps what is left of the old table from bucket `first` (a page boundary, or 0).
void ThreadCct::UnmapOldIndexFrom(uint32_t first) {
  const size_t bytes = (sizeof(uint32_t) << old_bits_) - first * sizeof(uint32_t);
  munmap(old_buckets_ + first, bytes);
  mapped_bytes_ -= bytes;
}

uint32_t InsertPath(ThreadCct* cct, const unwinder::Frame* frames, uint32_t depth, bool partial,
                    bool empty_is_root, uint32_t gap) {
  uint32_t node = kRootNode;
  if (partial || (depth == 0 && !empty_is_root)) {
    node = cct->FindOrInsertChild(kRootNode, 0, NodeKind::kPartialUnwind, 0);
  }
  for (uint32_t i = depth; i > 0 && node != kNoNode; --i) {
    if (i == gap) {
      node = cct->FindOrInsertChild(node, 0, NodeKind::kElided, 0);
      if (node == kNoNode) break;
    }
    node = cct->FindOrInsertChild(node, frames[i - 1].pc, NodeKind::kPc,
                                  static_cast<uint8_t>(frames[i - 1].edge));
  }
  return node;
}

bool RecordSample(ThreadCct* cct, SampleCounters* counters, const unwinder::Frame* frames,
                  uint32_t depth, bool partial, uint64_t weight_ns) {
  if (depth == 0) partial = true;
  const uint32_t node = InsertPath(cct, frames, depth, partial);
  if (node == kNoNode) {
    CounterAdd(&counters->dropped_no_memory, 1);
    return false;
  }
  cct->AddMetric(node, kMetricSamples, 1);
  cct->AddMetric(node, kMetricWork, weight_ns);
  CounterAdd(&counters->samples, 1);
  if (partial) CounterAdd(&counters->partial_unwinds, 1);
  CounterAdd(&counters->cpu_ns, weight_ns);
  return true;
}

}  // namespace cilkprof::agent
