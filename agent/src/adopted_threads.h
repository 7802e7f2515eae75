// Threads the agent did not see start (docs/AGENT.md, "Standby and attach").
//
// A thread registers itself when it starts through the interposed pthread_create
// (agent.cc). Threads that did not: every thread that was running when a standby agent
// was attached the first time (a preloaded standby agent registers nothing until then),
// and every thread of a process the agent was injected into (its pthread_create was
// bound to libc's before the agent arrived). The agent makes their records from another
// thread, by tid: at attach, and at every flush while attached (new threads of an
// injected process). A thread's TLS cannot be set from outside, so its own signal
// handler claims its record the first time it runs (ClaimAdoptedRecord). Their end is
// seen by the flusher, when the tid is gone from the thread group (ReapAdoptedThreads),
// not by the thread itself.
//
// Not signal-safe except ClaimAdoptedRecord. The others take the registry lock.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "thread_record.h"

namespace cilkprof::agent {

// Makes and arms (when sampling) a record for each thread of the process that has none,
// except the agent's own threads. Returns how many it made.
size_t AdoptUnknownThreads();

// Marks adopted threads that have ended as exited, their sample sources released: the
// flusher then sends their last delta and frees them.
void ReapAdoptedThreads();

// Async-signal-safe: the record adopted for the calling thread, now its tls_thread, or
// nullptr. One relaxed load when nothing was ever adopted.
ThreadRecord* ClaimAdoptedRecord();

// Registry lock held: the record's thread is ending by itself (it was claimed and then
// registered, or unregisters): its slot is freed so that the reaper never sees it again.
void ForgetAdoptedRecord(const ThreadRecord* record);
// In a fork child: the parent's threads and their slots are gone.
void ForgetAllAdoptedAfterFork();

// The agent's own threads (flusher, control thread) are never adopted.
void NoteAgentThread(pid_t tid);
void ForgetAgentThread(pid_t tid);

}  // namespace cilkprof::agent
