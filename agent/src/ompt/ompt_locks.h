// Lock waits and lock blame for OpenMP locks (issue 17; docs/OPENMP.md "Locks and
// critical sections"): OMPT's mutex callbacks feed the agent's lock accounting
// (locks/lock_accounting.h, the design in docs/AGENT.md "Lock blame").
//
// libomp reports mutex_acquire before its acquisition (which may block), then
// mutex_acquired (or, for a nest lock the thread already owns, nest_lock scope_begin),
// and mutex_released after the real release. Callbacks cannot try the lock first as the
// pthread interposers do, so contention is told apart like this:
//   - a lock without a record (never seen contended) is not registered at acquire: the
//     thread notes the time only, and an acquisition that took kContendedNs or more
//     gives the lock its record (it may have been contended; it is not counted: a slow
//     uncontended acquisition, lazy binding or a page fault, looks the same);
//   - a lock with a record registers every acquisition as a waiter (BeginWait), so that
//     releases during the wait hand out its blame; an acquisition is a wait when a
//     release covered part of it or another thread held the lock by the record, else
//     it was uncontended and is dropped (LockTable::AcquireReported).
// A release reported after a waiter already got the lock has been booked by that
// waiter for the holder, which collects it at its report (lock_table.h).
//
// omp_lock_t and omp_nest_lock_t are named by their address, a critical construct by
// its libomp lock's; kinds "omp_lock", "omp_nest_lock", "omp critical". omp_test_lock
// never waits (counted as an acquisition when it succeeds); atomic and ordered are not
// locks a holder releases for a waiter: not accounted.
#pragma once

#include <cstdint>

#include <omp-tools.h>

namespace cilkprof::agent::ompt {

// An acquisition of a lock without a record that took this long or longer gives the
// lock its record: above libomp's uncontended acquisition with both callbacks (about
// 0.1 us), below any wait that matters for the profile.
inline constexpr uint64_t kContendedNs = 1000;

// Registers the mutex callbacks (from the tool's initialize).
void RegisterMutexCallbacks(ompt_set_callback_t set);

}  // namespace cilkprof::agent::ompt
