// What the flusher and the agent's lifecycle do with the lock records (issue 14):
// per-lock LockDelta increments, the waits still open at the final flush, fork.
// Not signal-safe (the flusher's thread, flush_mu held), except ResetLocksAfterFork.
#pragma once

#include <vector>

#include "delta_builder.h"
#include "wire_messages.h"

namespace cilkprof::agent {
struct ThreadRecord;
}

namespace cilkprof::agent::locks {

// The increments of every lock record since the previous call (the records keep what
// was reported), resolved with `resolver` (module-relative in a module's data
// segments, else absolute). Condition variables are not locks: never reported.
void AppendLockDeltas(PcResolver* resolver, std::vector<LockDeltaMsg>* out);
// A receiver that has seen none of them (a spill file's snapshot): report from zero.
void ResendAllLocks();
// The final flush: each thread still waiting for a lock adds the time it has waited
// (since the previous final flush, after a failed exec) to lock_wait_open_ns.
// registry_mu held.
void MeasureOpenWaits(ThreadRecord* threads);
// The fork child (only the forking thread exists): no waiter, no record spinlock held.
void ResetLocksAfterFork();

}  // namespace cilkprof::agent::locks
