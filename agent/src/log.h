// The agent's own messages: one line on stderr, prefixed "cilkprof: ", written with
// write(2) (no stdio buffers shared with the program). Never call from a signal
// handler (formatting allocates).
#pragma once

#include <string>
#include <vector>

namespace cilkprof::agent {

void LogLine(const std::string& message);
// Informational lines are suppressed by CILKPROF_QUIET=1; warnings are not.
void SetQuiet(bool quiet);
void LogInfo(const std::string& message);
std::string ErrnoText(int error);

// Attached to a process that did not ask to be profiled by its own output (a standby or
// injected agent: docs/AGENT.md, "Standby and attach"), the agent writes nothing on the
// program's stderr: its lines are kept instead (the latest 32) and travel to whoever
// attached, in the Hello's warnings.
void SetSilent(bool silent);
std::vector<std::string> TakeSilencedLines();  // strerror_r, thread-safe

}  // namespace cilkprof::agent
