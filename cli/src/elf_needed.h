// The shared libraries an ELF executable names in its dynamic section (DT_NEEDED), as
// `readelf -d` lists them: what `cilkprof run` checks before it runs a program (is it
// linked with GCC's OpenMP runtime?). Only the executable's own list: libraries that
// its libraries need are not followed.
#pragma once

#include <string>
#include <vector>

namespace cilkprof::cli {

// Empty for a file that is not a 64-bit ELF with a dynamic section, or that cannot be
// read: the caller's checks (program_check.h) report those.
std::vector<std::string> NeededLibraries(const std::string& path);

}  // namespace cilkprof::cli
