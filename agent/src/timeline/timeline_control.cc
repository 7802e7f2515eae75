#include "timeline/timeline_control.h"

#include <dlfcn.h>

#include "agent_state.h"
#include "cilkprof/runtime_abi.h"
#include "timeline/timeline_buffers.h"

namespace cilkprof::agent::timeline {
namespace {

// The runtime calls these on the worker thread where the event happens, outside any
// signal handler: they write that thread's events ring, which its handler never
// touches (timeline_ring.h), and take no lock.
void Append(EventKind kind, uint32_t peer_plus_1, uint32_t worker) {
  ThreadRecord* t = tls_thread;
  if (t != nullptr) RecordEvent(t->timeline, kind, peer_plus_1, worker + 1);
}
void OnSteal(uint32_t thief, uint32_t victim) { Append(EventKind::kSteal, victim + 1, thief); }
void OnSyncWaitBegin(uint32_t worker) { Append(EventKind::kSyncWaitBegin, 0, worker); }
void OnSyncWaitEnd(uint32_t worker) { Append(EventKind::kSyncWaitEnd, 0, worker); }

const cilkprof_events_t kEvents = {sizeof(cilkprof_events_t), OnSteal, OnSyncWaitBegin, OnSyncWaitEnd};

using SetEvents = void (*)(const cilkprof_events_t*);
SetEvents FindSetEvents() {
  return reinterpret_cast<SetEvents>(dlsym(RTLD_DEFAULT, "cilkprof_runtime_set_events"));
}

}  // namespace

void StartTimeline(uint32_t events_per_ring) {
  SetEnabled(true, events_per_ring);
  OfferEventsToRuntime();
}

void StopTimeline() {
  SetEnabled(false, kDefaultEventsPerRing);
  if (SetEvents set = FindSetEvents()) set(nullptr);
}

void OfferEventsToRuntime() {
  if (!Enabled()) return;
  if (SetEvents set = FindSetEvents()) set(&kEvents);
}

}  // namespace cilkprof::agent::timeline
