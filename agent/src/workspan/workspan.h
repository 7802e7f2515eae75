// The agent's entry points into the work/span instrumentation tool (issue 5; design:
// docs/WORKSPAN.md). Internal to libcilkprof_agent.so.
//
// AttachHooks is called from cilkprof_tool_attach (agent/src/runtime_attach.cc) once,
// on the thread that starts the runtime, before any worker runs user code. It reads
// the configuration from the environment and returns the hook table, or nullptr when
// the instrumentation is off or the agent is in standby (late_attach.h: the hooks then
// come with an attach):
//   CILKPROF_WORKSPAN   1 (default) or 0 (`cilkprof run --no-workspan`)
//   CILKPROF_WS_CLOCK   tsc (default), monotonic or counter; CILKPROF_CLOCK=counter
//                       also selects the counter clock (time advances only through
//                       cilkprof_charge(units) on the calling strand)
//   CILKPROF_BURDEN     the burden of one spawn, in cycles for the tsc clock (converted
//                       to ns with the calibration), in ns for monotonic and in units
//                       for the counter clock; default 15000
// The hooks never allocate with malloc, never take a lock the program may hold, and
// never block; they are not called from signal handlers.
//
// AppendFrames encodes what the tool gathered since its previous call as Delta frames
// (wire.proto WorkSpanDelta: increments, like every other delta) and appends them to
// `frames`. The flusher may call it under its lock at each flush; the tool also sends
// by itself (with the flusher's lock) when a top-level computation ends and at exit,
// so calling it is optional. Returns the number of frames appended.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent::workspan {

const cilkprof_hooks_t* AttachHooks(const cilkprof_runtime_t* runtime);

size_t AppendFrames(std::vector<std::string>* frames);

// The same, as if to a receiver that has seen nothing yet: the totals so far (a spill
// file's snapshot, transport.h). Later frames are increments from there.
size_t AppendSnapshotFrames(std::vector<std::string>* frames);

}  // namespace cilkprof::agent::workspan
