// Default names of profile files.
#pragma once

#include <string>

#include "cilkprof/aggregator/server.h"

namespace cilkprof::aggregator {

// "<dir>/<executable basename>.<pid>.cilkprof", or, when that exists,
// "<dir>/<basename>.<pid>.<n>.cilkprof" with the smallest n >= 1 that does not exist.
// The basename is reduced to [A-Za-z0-9._+-] (others become '_'); an empty one is
// "process". Existence is checked now; writers use WriteNewProfileFile so that a name
// taken meanwhile is never overwritten.
std::string UniqueProfilePath(const std::string& dir, const ProcessKey& process);

}  // namespace cilkprof::aggregator
