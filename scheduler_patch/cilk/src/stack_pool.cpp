// Guard-paged fiber stacks: mmap'ed once, recycled through a per-worker cache and a
// global free list, unmapped only when the global list holds more than it needs.
// Live fibers are bounded by (workers x spawn depth); cached ones by the limits here.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "runtime.hpp"

namespace cilk::rt {
namespace {

constexpr uint32_t kWorkerCacheLimit = 8;
constexpr std::size_t kGuardBytes = 64 * 1024;  // large frames still hit the guard

std::size_t RoundUp(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

}  // namespace

void StackPool::Init(std::size_t usable_size, uint32_t workers) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  usable_size_ = RoundUp(usable_size, page);
  guard_size_ = RoundUp(kGuardBytes, page);
  map_size_ = guard_size_ + usable_size_ + RoundUp(sizeof(Fiber), page);
  global_limit_ = 4 * static_cast<std::size_t>(workers) + 16;
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
  char* const descriptor = top - RoundUp(sizeof(Fiber), static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  Fiber* fiber = ::new (descriptor) Fiber();
  fiber->map_base = base;
  fiber->map_size = map_size_;
  fiber->stack.segment.stack_lo = reinterpret_cast<uintptr_t>(base) + guard_size_;
  fiber->stack.segment.stack_hi = reinterpret_cast<uintptr_t>(descriptor);
  fiber->stack.tsan_fiber = sanitizer::CreateTsanFiber();
  return fiber;
}

void StackPool::Unmap(Fiber* fiber) {
  sanitizer::DestroyTsanFiber(fiber->stack.tsan_fiber);
  void* base = fiber->map_base;
  const std::size_t size = fiber->map_size;
  fiber->~Fiber();
  munmap(base, size);
}

Fiber* StackPool::Allocate(FiberCache* cache) {
  if (Fiber* fiber = cache != nullptr ? cache->head : nullptr; fiber != nullptr) {
    cache->head = fiber->next_free;
    --cache->count;
    return fiber;
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (Fiber* fiber = global_; fiber != nullptr) {
      global_ = fiber->next_free;
      --global_count_;
      return fiber;
    }
  }
  return Map();
}

void StackPool::Release(FiberCache* cache, Fiber* fiber) {
#ifdef CILK_TSAN
  // A dead fiber's TSan shadow stack still holds its last frames: start afresh.
  sanitizer::DestroyTsanFiber(fiber->stack.tsan_fiber);
  fiber->stack.tsan_fiber = sanitizer::CreateTsanFiber();
#endif
  fiber->scope = nullptr;
  fiber->parent = nullptr;
  if (cache != nullptr && cache->count < kWorkerCacheLimit) {
    fiber->next_free = cache->head;
    cache->head = fiber;
    ++cache->count;
    return;
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (global_count_ < global_limit_) {
      fiber->next_free = global_;
      global_ = fiber;
      ++global_count_;
      return;
    }
  }
  Unmap(fiber);
}

}  // namespace cilk::rt
