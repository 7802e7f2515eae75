#include "workspan/pool.h"

#include <sys/mman.h>

#include <atomic>

namespace cilkprof::agent::workspan {
namespace {

using Header = Pool::Header;
constexpr uint32_t kMagic = 0xC11C5A5Du;
constexpr size_t kChunkBytes = size_t{1} << 20;

std::atomic<uint64_t> g_total_mapped{0};

// A batch is a chain of kBatch free blocks linked through FreeBlock::next; batches
// are chained through the second word of their first block.
struct Depot {
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  void* batches = nullptr;
};
Depot g_depot[Pool::kClasses];

void Lock(Depot& d) {
  while (d.lock.test_and_set(std::memory_order_acquire)) {
    __builtin_ia32_pause();
  }
}
void Unlock(Depot& d) { d.lock.clear(std::memory_order_release); }

void* MapBytes(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  g_total_mapped.fetch_add(bytes, std::memory_order_relaxed);
  return p;
}

}  // namespace

uint64_t TotalPoolBytes() { return g_total_mapped.load(std::memory_order_relaxed); }

void LockPoolDepotsForFork() {
  for (Depot& d : g_depot) Lock(d);
}

void UnlockPoolDepotsAfterFork() {
  for (Depot& d : g_depot) Unlock(d);
}

void* Pool::Refill(int c) {
  // A batch from the depot first.
  Depot& depot = g_depot[c];
  Lock(depot);
  void* batch = depot.batches;
  if (batch != nullptr) depot.batches = reinterpret_cast<void**>(batch)[1];
  Unlock(depot);
  if (batch != nullptr) {
    FreeBlock* first = static_cast<FreeBlock*>(batch);
    free_[c] = first->next;
    cached_[c] = kBatch - 1;
    return first;
  }
  // Carve a new block.
  const size_t block_bytes = sizeof(Header) + (size_t{32} << c);
  if (chunk_cursor_ == nullptr || static_cast<size_t>(chunk_end_ - chunk_cursor_) < block_bytes) {
    const size_t chunk = block_bytes > kChunkBytes ? block_bytes : kChunkBytes;
    char* memory = static_cast<char*>(MapBytes(chunk));
    if (memory == nullptr) return nullptr;
    mapped_bytes_ += chunk;
    // The tail of the previous chunk is abandoned (at most one block's worth).
    chunk_cursor_ = memory;
    chunk_end_ = memory + chunk;
  }
  Header* h = reinterpret_cast<Header*>(chunk_cursor_);
  chunk_cursor_ += block_bytes;
  h->size_class = static_cast<uint32_t>(c);
  h->magic = kMagic;
  return h + 1;
}

void Pool::SpillBatch(int c) {
  FreeBlock* first = free_[c];
  FreeBlock* last = first;
  for (uint32_t i = 1; i < kBatch; ++i) last = last->next;
  free_[c] = last->next;
  last->next = nullptr;
  cached_[c] -= kBatch;
  Depot& depot = g_depot[c];
  Lock(depot);
  reinterpret_cast<void**>(first)[1] = depot.batches;
  depot.batches = first;
  Unlock(depot);
}

}  // namespace cilkprof::agent::workspan
