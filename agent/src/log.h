// The agent's own messages: one line on stderr, prefixed "cilkprof: ", written with
// write(2) (no stdio buffers shared with the program). Never call from a signal
// handler (formatting allocates).
#pragma once

#include <string>

namespace cilkprof::agent {

void LogLine(const std::string& message);
// Informational lines are suppressed by CILKPROF_QUIET=1; warnings are not.
void SetQuiet(bool quiet);
void LogInfo(const std::string& message);
std::string ErrnoText(int error);  // strerror_r, thread-safe

}  // namespace cilkprof::agent
