// A thread's timeline (issue 16; docs/AGENT.md "Timeline"): its two event rings and
// what the flusher has reported of them, and the process-wide switch.
//
// With the timeline on (CILKPROF_TIMELINE=1, or an attach with timeline=1), each thread
// gets its buffers when it registers (or, for a thread that registered before the
// switch, at the flusher's next flush), mapped once and never resized. Samples go to
// `samples` from the thread's signal handler; the runtime's steal and sync-wait events
// go to `events` from the thread's own code (runtime_events.h). The flusher drains both
// into one TimelineChunk per thread per flush, merged in time order.
//
// Lifetime: the buffers belong to the thread record (Slot frees them with it); the
// pointer is published with a release store and read with acquire loads, so a producer
// sees either no buffers or complete ones.
#pragma once

#include <cstdint>
#include <vector>

#include "timeline/timeline_ring.h"
#include "wire_messages.h"

namespace cilkprof::agent::timeline {

inline constexpr uint32_t kDefaultEventsPerRing = 32768;

struct Buffers {
  Ring samples;
  Ring events;
  uint32_t worker_id_plus_1 = 0;  // the producer's latest (atomic accesses)
  uint64_t dropped_reported = 0;  // flusher only
};

// The process-wide switch and ring size. The handler and the runtime's callbacks read
// the switch (relaxed) before anything else: with the timeline off they cost one load.
bool Enabled();
void SetEnabled(bool on, uint32_t events_per_ring);

// A thread record's buffers, or none. Freed with the record.
class Slot {
 public:
  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() { delete get(); }
  Buffers* get() const { return __atomic_load_n(&buffers_, __ATOMIC_ACQUIRE); }
  // With the timeline on and no buffers yet: maps them. Not signal-safe; called by the
  // thread before its record is published, or by the flusher. False if mmap failed.
  bool Ensure();

 private:
  Buffers* buffers_ = nullptr;
};

// Async-signal-safe (the sampling handler, or the thread with its handler kept out):
// one sample of `state` at CCT node `node` (0 when the sample has no context).
void RecordSample(const Slot& slot, State state, uint32_t node, uint32_t worker_id_plus_1);
// The thread's own code, outside the handler: a runtime event; `peer_plus_1` is a steal's
// victim worker id + 1, else 0.
void RecordEvent(const Slot& slot, EventKind kind, uint32_t peer_plus_1, uint32_t worker_id_plus_1);

// The flusher: drains both rings into `out` (tid and thread index filled in by the
// caller), oldest first, times delta-encoded. False when there is nothing to send (no
// event, no new drop).
bool DrainChunk(const Slot& slot, TimelineChunkMsg* out);

uint64_t MonotonicNowNs();  // async-signal-safe (clock_gettime)

}  // namespace cilkprof::agent::timeline
