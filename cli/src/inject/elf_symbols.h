// Where functions of the target's shared libraries live in its address space: the
// library's file (seen through the target's root) is read with libelf, its dynamic
// symbols looked up, and the load bias taken from /proc/PID/maps.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "inject/target_process.h"

namespace cilkprof::cli::inject {

// A shared object mapped in the target.
struct LoadedObject {
  std::string path_in_target;   // as /proc/PID/maps names it
  std::string readable_path;    // the same file, openable from here
  std::uint64_t first_map_start = 0;  // start of its mapping at file offset 0
};

// The first object whose basename satisfies `matches`, or nullopt.
std::optional<LoadedObject> FindLoadedObject(pid_t pid, const std::vector<Mapping>& mappings,
                                             const std::function<bool(const std::string&)>& matches);

// The target addresses of the functions `names` defined in `object` (the default
// version when a symbol has several). Names that are not defined there are absent
// from the map; the error is for a file that cannot be read as ELF.
Result<std::map<std::string, std::uint64_t>> LookUpFunctions(const LoadedObject& object,
                                                             const std::vector<std::string>& names);

}  // namespace cilkprof::cli::inject
