// Internal pieces shared by the unwinder's translation units.
#pragma once

namespace cilkprof::unwinder::internal {

// Installs the SIGSEGV/SIGBUS handlers once, capturing the program's current ones as
// the chained handlers. Not signal-safe. False (and a static message) on failure.
bool InstallFaultGuard(const char** error);

// Records the calling thread's stack bounds for CurrentThreadStack(). Not signal-safe
// (pthread_getattr_np may read /proc/self/maps and allocate).
void RecordThreadStack();

}  // namespace cilkprof::unwinder::internal
