// Turning the timeline on and off for the process (issue 16; docs/AGENT.md
// "Timeline"): the switch the handler reads, and the runtime's event callbacks
// (cilkprof/runtime_abi.h, "Scheduling events"), whose calls land in the calling
// thread's events ring. Not signal-safe; called at start-up, at an attach and at a
// detach.
#pragma once

#include <cstdint>

namespace cilkprof::agent::timeline {

// Turns recording on with rings of `events_per_ring` events, and asks the runtime, if
// one with scheduling events is loaded, for its steals and sync waits.
void StartTimeline(uint32_t events_per_ring);
// Stops recording and removes the callbacks (a detach). Buffers stay with their
// records; what they hold is sent by the flush that follows.
void StopTimeline();
// The runtime started (cilkprof_tool_attach) or was found late: if the timeline is on,
// hand it the callbacks (a runtime library loaded after StartTimeline).
void OfferEventsToRuntime();

}  // namespace cilkprof::agent::timeline
