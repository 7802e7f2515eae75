// Per-thread block allocator for the work/span hooks: no malloc, no lock on the hot
// path, memory from mmap'd chunks.
//
// Blocks come in power-of-two size classes (32 bytes .. 1 MiB of payload). A block is
// freed into the free list of the thread that frees it (a Cilk frame may be entered
// on one worker and left on another). A thread whose list of a class grows past
// kMaxCached hands a batch to a global depot; a thread whose list is empty takes a
// batch from the depot before mapping new memory. The depot's spin lock is taken once
// per kBatch blocks, never by the program, and never while the program waits for
// anything, so memory stays bounded by the peak of live blocks (plus the per-thread
// caches) however blocks migrate between threads.
//
// Not async-signal-safe (the hooks are never called from signal handlers); a pool is
// used only by its owner thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cilkprof::agent::workspan {

class Pool {
 public:
  static constexpr int kClasses = 16;          // payloads 32 B << 0 .. 15 (1 MiB)
  static constexpr size_t kMaxPayload = size_t{32} << (kClasses - 1);
  static constexpr uint32_t kBatch = 64;
  static constexpr uint32_t kMaxCached = 2 * kBatch;

  // Every block starts with this header; the payload follows at +16.
  struct alignas(16) Header {
    uint32_t size_class;
    uint32_t magic;
  };

  // At least `bytes` (<= kMaxPayload) of 16-byte aligned memory, or nullptr if the
  // system refused memory. Inline: the hooks allocate on every spawn and scope.
  void* Allocate(size_t bytes) {
    if (bytes > kMaxPayload) return nullptr;
    const int c = ClassFor(bytes);
    FreeBlock* b = free_[c];
    if (b == nullptr) return Refill(c);
    free_[c] = b->next;
    --cached_[c];
    return b;
  }
  // Any block from any pool; the block joins this pool.
  void Free(void* block) {
    if (block == nullptr) return;
    const int c = static_cast<int>(static_cast<const Header*>(block)[-1].size_class);
    auto* b = static_cast<FreeBlock*>(block);
    b->next = free_[c];
    free_[c] = b;
    if (++cached_[c] >= kMaxCached) SpillBatch(c);
  }

  // Bytes this pool has mapped (for tests of the memory bound).
  uint64_t mapped_bytes() const { return mapped_bytes_; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static int ClassFor(size_t bytes) {
    return bytes <= 32 ? 0 : 64 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1)) - 5;
  }
  void* Refill(int size_class);        // from the depot, else a new block
  void SpillBatch(int size_class);     // hands kBatch cached blocks to the depot

  FreeBlock* free_[kClasses] = {};
  uint32_t cached_[kClasses] = {};
  char* chunk_cursor_ = nullptr;
  char* chunk_end_ = nullptr;
  uint64_t mapped_bytes_ = 0;
};

// All bytes ever mapped by all pools (tests).
uint64_t TotalPoolBytes();

// fork(): hold every depot lock across the fork (see engine.h LockForFork).
void LockPoolDepotsForFork();
void UnlockPoolDepotsAfterFork();

}  // namespace cilkprof::agent::workspan
