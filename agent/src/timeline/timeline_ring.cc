#include "timeline/timeline_ring.h"

#include <sys/mman.h>

namespace cilkprof::agent::timeline {

bool Ring::Init(uint32_t capacity) {
  Destroy();
  uint64_t rounded = 2;
  while (rounded < capacity) rounded <<= 1;
  const size_t bytes = static_cast<size_t>(rounded) * sizeof(Event);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  slots_ = static_cast<Event*>(p);
  capacity_ = rounded;
  mask_ = rounded - 1;
  mapped_bytes_ = bytes;
  head_ = tail_ = dropped_ = 0;
  return true;
}

void Ring::Destroy() {
  if (slots_ != nullptr) munmap(slots_, mapped_bytes_);
  slots_ = nullptr;
  capacity_ = mask_ = 0;
  mapped_bytes_ = 0;
}

size_t Ring::Drain(std::vector<Event>* out) {
  if (slots_ == nullptr) return 0;
  const uint64_t head = __atomic_load_n(&head_, __ATOMIC_ACQUIRE);
  const uint64_t tail = __atomic_load_n(&tail_, __ATOMIC_RELAXED);
  for (uint64_t i = tail; i != head; ++i) out->push_back(slots_[i & mask_]);
  __atomic_store_n(&tail_, head, __ATOMIC_RELEASE);
  return static_cast<size_t>(head - tail);
}

}  // namespace cilkprof::agent::timeline
