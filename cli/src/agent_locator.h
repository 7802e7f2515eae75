// Where libcilkprof_agent.so is: $CILKPROF_AGENT; else next to this executable in a
// build tree (<bin>/../lib/libcilkprof_agent.so); else installed, relative to this
// executable so that a moved install tree works (<bin>/../<relative libdir>/cilkprof/,
// e.g. lib/x86_64-linux-gnu for a /usr configure, and <bin>/../lib/cilkprof/), then at
// the configured <libdir>/cilkprof/.
#pragma once

#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::cli {

// `env_override` is $CILKPROF_AGENT (nullptr when unset); `executable_dir` is the
// directory of the running cilkprof; `install_libdir` the configured libdir, and
// `relative_libdir` the same below the prefix (CMAKE_INSTALL_LIBDIR; ignored if empty or
// absolute).
Result<std::string> LocateAgent(const char* env_override, const std::string& executable_dir,
                                const std::string& install_libdir, const std::string& relative_libdir = "lib");

// The directory of /proc/self/exe ("" if unknown).
std::string ExecutableDir();

}  // namespace cilkprof::cli
