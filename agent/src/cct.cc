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
  chunks_ = nullptr;
  buckets_ = nullptr;
  chunk_slots_ = 0;
  count_ = 0;
  mapped_bytes_ = 0;
}

uint32_t ThreadCct::Bucket(uint32_t parent, uintptr_t pc, NodeKind kind, uint8_t edge) const {
  uint64_t h = (uint64_t{pc} * 0x9E3779B97F4A7C15ull) ^
               ((uint64_t{parent} << 2 | uint64_t(kind) << 1 | edge) * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return bucket_bits_ == 0 ? 0 : static_cast<uint32_t>(h >> (64 - bucket_bits_));
}

uint32_t ThreadCct::FindOrInsertChild(uint32_t parent, uintptr_t pc, NodeKind kind,
                                      uint8_t edge) {
  const uint32_t bucket = Bucket(parent, pc, kind, edge);
  for (uint32_t id = buckets_[bucket]; id != 0;) {
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
  n.hash_next = buckets_[bucket];
  buckets_[bucket] = id;
  __atomic_store_n(&count_, id + 1, __ATOMIC_RELEASE);  // publish to the flusher
  MaybeGrowIndex();
  return id;
}

// Keeps chains short (average <= 2) by doubling the index when it gets crowded. The
// index is private to the owner (readers never look at it), so rebuilding it in place
// is safe; the new table comes from mmap, a system call.
void ThreadCct::MaybeGrowIndex() {
  if (!grow_index_ || count_ <= (2u << bucket_bits_) || bucket_bits_ >= 31) return;
  const uint32_t new_bits = bucket_bits_ + 1;
  auto* fresh = static_cast<uint32_t*>(MapZeroed(sizeof(uint32_t) << new_bits));
  if (fresh == nullptr) return;  // keep the old index: longer chains, still correct
  uint32_t* old = buckets_;
  const uint32_t old_bits = bucket_bits_;
  buckets_ = fresh;
  bucket_bits_ = new_bits;
  for (uint32_t id = 1; id < count_; ++id) {
    CctNode& n = Nodes(id / kChunkNodes)[id % kChunkNodes];
    const uint32_t b = Bucket(n.parent, n.pc, n.kind, n.edge);
    n.hash_next = buckets_[b];
    buckets_[b] = id;
  }
  munmap(old, sizeof(uint32_t) << old_bits);
  mapped_bytes_ += (sizeof(uint32_t) << new_bits) - (sizeof(uint32_t) << old_bits);
}

uint32_t InsertPath(ThreadCct* cct, const unwinder::Frame* frames, uint32_t depth, bool partial,
                    bool empty_is_root) {
  uint32_t node = kRootNode;
  if (partial || (depth == 0 && !empty_is_root)) {
    node = cct->FindOrInsertChild(kRootNode, 0, NodeKind::kPartialUnwind, 0);
  }
  for (uint32_t i = depth; i > 0 && node != kNoNode; --i) {
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
