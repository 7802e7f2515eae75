// The program's calls of the interposed functions, for an agent injected into a running
// process (issue 15; docs/AGENT.md "Standby and attach", "Injected: the program's calls").
//
// A preloaded agent receives the program's lock calls (lock blame) and pthread_create /
// pthread_exit (thread registration) by symbol preemption. An injected agent is
// dlopen()ed after every module was bound to libc, so while attached these calls are
// redirected to the agent's interposers by rewriting the modules' GOT slots
// (got_patch.h); the detach writes the loader's values back.
//
// Redirected: the lock functions of locks/lock_calls.cc (the "locks" part of
// exports.map) and pthread_create/pthread_exit, in every module but the agent, libc,
// the dynamic loader and the vdso; only slots bound to the very function the agent's
// interposer calls (or not yet bound), so another interposer the program preloaded
// keeps its calls.
//
// What a detach leaves behind is consistent: a thread inside an interposer when its
// slot is restored finishes the call in the agent (the agent is never unloaded), and
// every wait it registered in the lock table it also deregisters itself (EndWait), so
// no waiter count outlives the call; a lock acquired through the interposer and
// released through libc's unlock only hands out no blame. A thread started through the
// interposer while attached unregisters itself when it ends, attached or not.
//
// Called on the control thread under the attach mutex (standby.cc): Redirect at attach,
// Restore at detach. Redirect may also run at every flush while attached (the flusher,
// which the detach stops before it restores): it then rewrites only the slots of
// modules loaded since, and costs one read of the loader's counters when none was.
// Not signal-safe.
#pragma once

#include <string>

namespace cilkprof::agent {

// Rewrites the slots; false with why (then nothing stays rewritten).
bool RedirectProgramCalls(std::string* why);
// Writes back every slot RedirectProgramCalls rewrote; nothing when none was.
void RestoreProgramCalls();

}  // namespace cilkprof::agent
