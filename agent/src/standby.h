// Attach and detach of a standby agent (docs/AGENT.md, "Standby and attach").
//
// A standby agent (CILKPROF_STANDBY=1, or injected by `cilkprof attach`) arms nothing
// and sends nothing: no sampling signal handler, no timer or perf event, no flusher, no
// lock accounting, no work/span hooks. Its one thread, the control thread
// (control/control_server.h), waits for `cilkprof attach`, which hands it a connection
// to an aggregator and the sampling settings. From the attach to the detach the agent
// runs as under `cilkprof run`; the detach sends the window's last data and a Goodbye
// and restores the process as it was: the signal's disposition, no armed source, no
// flusher. Threads keep their records between windows: each window's deltas are what
// ran in it (the builders' shadows carry over; the nodes are declared again).
//
// Not signal-safe. AttachNow and DetachNow run on the control thread (never on the
// flusher, which DetachNow joins); the exit path (FinishAttachAtExit) on the exiting
// thread; one mutex orders them.
#pragma once

#include <string>

#include "cilkprof/common/control_protocol.h"

namespace cilkprof::agent {

struct AttachOutcome {
  enum Kind { kOk, kBusy, kError } kind = kError;
  std::string message;  // kOk: the reply's words after "OK"; otherwise why
};

// Takes ownership of `aggregator_fd` (closed on failure).
AttachOutcome AttachNow(const control::AttachRequest& request, int aggregator_fd);

// Ends the attach: false when none is on.
bool DetachNow(const char* reason);

// Before an exec-family call: ends an attach that is on with Goodbye("exec").
void DetachBeforeExec();

// Whether an attach is on, and whether it outlives its control connection.
bool AttachedNow(bool* persistent = nullptr);

// The flusher, each cycle while attached, flush lock NOT held: makes records for the
// threads the agent has not seen start, reaps the ended ones (adopted_threads.h).
void TrackUnseenThreads();

// The flusher, flush lock held, after a flush: when the connection was lost, tells the
// control thread to detach.
void NoteConnectionState();

}  // namespace cilkprof::agent
