// A bounded single-producer/single-consumer ring of timeline events (issue 16;
// docs/AGENT.md "Timeline").
//
// The producer is one execution context of one thread: its sampling signal handler (the
// samples ring), or its own code outside the handler (the runtime-events ring: steals
// and sync waits, written by the runtime's callbacks). Two contexts of one thread never
// share a ring, so a handler that interrupts the thread's own push never meets a
// half-done one. The consumer is the flusher (under flush_mu).
//
// Push is async-signal-safe: no allocation, no lock, two atomic loads and one store.
// When the ring is full the NEW event is dropped and counted (never block, never
// overwrite a slot the flusher may be reading): the kept events are the oldest ones not
// yet drained, and `dropped` says how many were lost.
//
// Indices grow without wrapping (64 bits); a slot is index & mask. The producer writes
// the slot, then publishes head with a release store; the consumer reads head with
// acquire, copies the slots, then frees them with a release store of tail, which the
// producer reads with acquire before reusing a slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cilkprof::agent::timeline {

// Values of wire.proto TimelineEventKind and TimelineState.
enum class EventKind : uint8_t { kUnknown = 0, kSample = 1, kSteal = 2, kSyncWaitBegin = 3, kSyncWaitEnd = 4 };
enum class State : uint8_t { kUnknown = 0, kWorking = 1, kIdle = 2, kOverhead = 3, kLockWait = 4, kNotAWorker = 5 };

struct Event {
  uint64_t time_ns;  // CLOCK_MONOTONIC
  uint32_t node;     // samples: the thread's CCT node id; steals: victim worker id + 1
  EventKind kind;
  State state;       // samples; kUnknown otherwise
  uint16_t unused;
};
static_assert(sizeof(Event) == 16, "docs/AGENT.md \"Timeline\" states the event size; update it");

class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() { Destroy(); }

  // Maps room for `capacity` events (rounded up to a power of two, at least 2). Not
  // signal-safe. False if mmap fails.
  bool Init(uint32_t capacity);
  void Destroy();

  // Producer only; async-signal-safe. False (and dropped + 1) when full.
  bool Push(const Event& event) {
    const uint64_t head = __atomic_load_n(&head_, __ATOMIC_RELAXED);
    const uint64_t tail = __atomic_load_n(&tail_, __ATOMIC_ACQUIRE);
    if (head - tail >= capacity_) {
      __atomic_store_n(&dropped_, __atomic_load_n(&dropped_, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
      return false;
    }
    slots_[head & mask_] = event;
    __atomic_store_n(&head_, head + 1, __ATOMIC_RELEASE);
    return true;
  }

  // Consumer only: appends the events pushed so far, oldest first, and frees their
  // slots. Returns how many.
  size_t Drain(std::vector<Event>* out);

  // Any thread: events dropped since Init (a running total).
  uint64_t dropped() const { return __atomic_load_n(&dropped_, __ATOMIC_RELAXED); }
  uint32_t capacity() const { return static_cast<uint32_t>(capacity_); }
  size_t mapped_bytes() const { return mapped_bytes_; }

 private:
  Event* slots_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t mask_ = 0;
  size_t mapped_bytes_ = 0;
  uint64_t head_ = 0;     // next slot to write: producer stores, consumer loads
  uint64_t tail_ = 0;     // next slot to read: consumer stores, producer loads
  uint64_t dropped_ = 0;  // producer stores (single writer), anyone loads
};

}  // namespace cilkprof::agent::timeline
