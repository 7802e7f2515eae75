// Guard-paged fiber stacks: mmap'ed once, recycled through a per-worker cache (the
// inline fast paths in runtime.hpp) and a shared free list used in batches, unmapped
// only when the shared list holds more than it needs. Live fibers are bounded by
// (workers x spawn depth); cached ones by the limits here.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "runtime.hpp"

// Bounds of the section holding cilk_invoke_child (defined by the linker).
extern "C" const char __start_cilk_trampoline_text[] __attribute__((visibility("hidden")));
extern "C" const char __stop_cilk_trampoline_text[] __attribute__((visibility("hidden")));

namespace cilk::rt {
namespace {

constexpr std::size_t kGuardBytes = 64 * 1024;  // large frames still hit the guard

std::size_t RoundUp(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }
constexpr std::size_t DescriptorBytes() { return (sizeof(Fiber) + 63) / 64 * 64; }

}  // namespace

void StackPool::Init(std::size_t usable_size, uint32_t workers) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  usable_size_ = RoundUp(usable_size, page);
  guard_size_ = RoundUp(kGuardBytes, page);
  // The descriptor shares the stack's top page, where the fiber's first frames are:
  // a spawn touches one page of a cached fiber, not two.
  map_size_ = guard_size_ + RoundUp(usable_size_ + DescriptorBytes(), page);
  global_limit_ = static_cast<std::size_t>(kWorkerCacheLimit) * workers + 2 * kBatch;
}

Fiber* StackPool::Map() {
  void* base = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                    -1, 0);
  if (base == MAP_FAILED) {
    Fatal("cilk: cannot map a fiber stack (mmap failed: out of memory or address space). Lower "
          "CILK_STACK_SIZE or CILK_NWORKERS, or raise the process's memory limits.\n");
  }
  if (mprotect(base, guard_size_, PROT_NONE) != 0) {
    Fatal("cilk: cannot protect a fiber stack's guard page (mprotect failed).\n");
  }
  char* const top = static_cast<char*>(base) + map_size_;
  sanitizer::ForgetFrames(reinterpret_cast<uintptr_t>(base), reinterpret_cast<uintptr_t>(top));
  char* const descriptor = top - DescriptorBytes();
  Fiber* fiber = ::new (descriptor) Fiber();
  fiber->map_base = base;
  fiber->map_size = map_size_;
  fiber->stack.segment.stack_lo = reinterpret_cast<uintptr_t>(base) + guard_size_;
  fiber->stack.segment.stack_hi = reinterpret_cast<uintptr_t>(descriptor);
  // Every child segment has the same entry range: set once here, not per spawn.
  fiber->stack.segment.entry_lo = reinterpret_cast<uintptr_t>(__start_cilk_trampoline_text);
  fiber->stack.segment.entry_hi = reinterpret_cast<uintptr_t>(__stop_cilk_trampoline_text);
  fiber->stack.tsan_fiber = sanitizer::CreateTsanFiber();
  return fiber;
}

void StackPool::Unmap(Fiber* fiber) {
  sanitizer::DestroyTsanFiber(fiber->stack.tsan_fiber);
  void* base = fiber->map_base;
  const std::size_t size = fiber->map_size;
  fiber->~Fiber();
  // Frames a child left on the stack may still be poisoned (see ForgetFrames).
  sanitizer::ForgetFrames(reinterpret_cast<uintptr_t>(base), reinterpret_cast<uintptr_t>(base) + size);
  munmap(base, size);
}

// The calling worker's cache is empty: refill it with a batch from the shared list
// (one lock for kBatch spawns), or map a new stack.
Fiber* StackPool::AllocateSlow(FiberCache* cache) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (Fiber* fiber = global_; fiber != nullptr) {
      global_ = fiber->next_free;
      --global_count_;
      for (uint32_t moved = 0; cache != nullptr && moved < kBatch && global_ != nullptr; ++moved) {
        Fiber* extra = global_;
        global_ = extra->next_free;
        --global_count_;
        extra->next_free = cache->head;
        cache->head = extra;
        ++cache->count;
      }
      return fiber;
    }
  }
  return Map();
}

// The calling worker's cache is full (or there is none): move a batch of it, then
// `fiber`, to the shared list; unmap what the shared list cannot keep.
void StackPool::ReleaseSlow(FiberCache* cache, Fiber* fiber) {
  Fiber* batch = fiber;
  fiber->next_free = nullptr;
  for (uint32_t moved = 0; cache != nullptr && moved < kBatch && cache->head != nullptr; ++moved) {
    Fiber* extra = cache->head;
    cache->head = extra->next_free;
    --cache->count;
    extra->next_free = batch;
    batch = extra;
  }
  Fiber* excess = nullptr;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    while (batch != nullptr) {
      Fiber* next = batch->next_free;
      if (global_count_ < global_limit_) {
        batch->next_free = global_;
        global_ = batch;
        ++global_count_;
      } else {
        batch->next_free = excess;
        excess = batch;
      }
      batch = next;
    }
  }
  while (excess != nullptr) {  // munmap outside the lock
    Fiber* next = excess->next_free;
    Unmap(excess);
    excess = next;
  }
}

}  // namespace cilk::rt
