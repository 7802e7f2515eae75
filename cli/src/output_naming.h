// Names of the profile files `cilkprof run` writes. Never overwrites silently: a
// default name takes the first free "<stem>.cilkprof", "<stem>.1.cilkprof", ...
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace cilkprof::cli {

// The program's basename reduced to [A-Za-z0-9._+-] ("" -> "program").
std::string ProfileStem(const std::string& program);

// "<dir>/<stem>.cilkprof" if free, else "<dir>/<stem>.N.cilkprof" with the smallest
// N >= 1 that is free. Free: no file there and not in `taken`. `dir` "" = current.
std::string FirstFreeProfilePath(const std::string& dir, const std::string& stem,
                                 const std::set<std::string>& taken);

// The name of a further process's profile (a fork child, an exec'd image) next to
// the main one: "<main without .cilkprof>.<pid>.cilkprof", then ".<pid>.N.cilkprof".
std::string RelatedProfilePath(const std::string& main_path, uint32_t pid,
                               const std::set<std::string>& taken);

}  // namespace cilkprof::cli
