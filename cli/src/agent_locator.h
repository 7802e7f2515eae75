// Where libcilkprof_agent.so is: $CILKPROF_AGENT; else next to this executable in a
// build tree (<bin>/../lib/libcilkprof_agent.so); else installed
// (<bin>/../lib/cilkprof/libcilkprof_agent.so, then <libdir>/cilkprof/).
#pragma once

#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::cli {

// `env_override` is $CILKPROF_AGENT (nullptr when unset); `executable_dir` is the
// directory of the running cilkprof; `install_libdir` the configured libdir.
Result<std::string> LocateAgent(const char* env_override, const std::string& executable_dir,
                                const std::string& install_libdir);

// The directory of /proc/self/exe ("" if unknown).
std::string ExecutableDir();

}  // namespace cilkprof::cli
