#include "timeline/timeline_buffers.h"

#include <time.h>

#include <algorithm>
#include <new>

namespace cilkprof::agent::timeline {
namespace {

int g_enabled = 0;                               // atomic accesses
uint32_t g_events_per_ring = kDefaultEventsPerRing;  // atomic accesses

void NoteWorker(Buffers* b, uint32_t worker_id_plus_1) {
  if (worker_id_plus_1 != 0) __atomic_store_n(&b->worker_id_plus_1, worker_id_plus_1, __ATOMIC_RELAXED);
}

}  // namespace

bool Enabled() { return __atomic_load_n(&g_enabled, __ATOMIC_RELAXED) != 0; }

void SetEnabled(bool on, uint32_t events_per_ring) {
  if (on) __atomic_store_n(&g_events_per_ring, events_per_ring, __ATOMIC_RELAXED);
  __atomic_store_n(&g_enabled, on ? 1 : 0, __ATOMIC_RELEASE);
}

uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool Slot::Ensure() {
  if (!Enabled() || get() != nullptr) return true;
  auto* b = new (std::nothrow) Buffers();
  if (b == nullptr) return false;
  const uint32_t capacity = __atomic_load_n(&g_events_per_ring, __ATOMIC_RELAXED);
  if (!b->samples.Init(capacity) || !b->events.Init(capacity)) {
    delete b;
    return false;
  }
  __atomic_store_n(&buffers_, b, __ATOMIC_RELEASE);
  return true;
}

void RecordSample(const Slot& slot, State state, uint32_t node, uint32_t worker_id_plus_1) {
  if (!Enabled()) return;
  Buffers* b = slot.get();
  if (b == nullptr) return;
  NoteWorker(b, worker_id_plus_1);
  b->samples.Push(Event{MonotonicNowNs(), node, EventKind::kSample, state, 0});
}

void RecordEvent(const Slot& slot, EventKind kind, uint32_t peer_plus_1, uint32_t worker_id_plus_1) {
  if (!Enabled()) return;
  Buffers* b = slot.get();
  if (b == nullptr) return;
  NoteWorker(b, worker_id_plus_1);
  b->events.Push(Event{MonotonicNowNs(), peer_plus_1, kind, State::kUnknown, 0});
}

bool DrainChunk(const Slot& slot, TimelineChunkMsg* out) {
  Buffers* b = slot.get();
  if (b == nullptr) return false;
  // Each ring is in time order (one producer, a monotonic clock): merge them. The drop
  // counts are read first, so a drop counted here is never of an event drained later.
  const uint64_t dropped = b->samples.dropped() + b->events.dropped();
  std::vector<Event> samples, events;
  b->samples.Drain(&samples);
  b->events.Drain(&events);
  std::vector<Event> merged(samples.size() + events.size());
  std::merge(samples.begin(), samples.end(), events.begin(), events.end(), merged.begin(),
             [](const Event& a, const Event& e) { return a.time_ns < e.time_ns; });
  out->dropped = dropped - b->dropped_reported;
  b->dropped_reported = dropped;
  out->worker_id_plus_1 = __atomic_load_n(&b->worker_id_plus_1, __ATOMIC_RELAXED);
  uint64_t previous = 0;
  for (const Event& e : merged) {
    out->time_delta_ns.push_back(e.time_ns - previous);
    previous = e.time_ns;
    out->kind.push_back(static_cast<uint32_t>(e.kind));
    out->state.push_back(static_cast<uint32_t>(e.state));
    out->node.push_back(e.node);
  }
  return !merged.empty() || out->dropped != 0;
}

}  // namespace cilkprof::agent::timeline
