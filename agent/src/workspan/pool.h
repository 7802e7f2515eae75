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

  // At least `bytes` (<= kMaxPayload) of 16-byte aligned memory, or nullptr if the
  // system refused memory.
  void* Allocate(size_t bytes);
  // Any block from any pool; the block joins this pool.
  void Free(void* block);

  // Bytes this pool has mapped (for tests of the memory bound).
  uint64_t mapped_bytes() const { return mapped_bytes_; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  void* Refill(int size_class);

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
