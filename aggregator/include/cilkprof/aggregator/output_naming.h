// Default names of profile files.
#pragma once

#include <cstdint>
#include <string>

#include "cilkprof/aggregator/server.h"

namespace cilkprof::aggregator {

// "<dir>/<executable basename>.<pid>.cilkprof", or, when that exists,
// "<dir>/<basename>.<pid>.<n>.cilkprof" with the smallest n >= 1 that does not exist.
// A window's profile (process.window_start_unix_ns != 0) has its start between the pid
// and the suffix, in UTC: "<basename>.<pid>.20261125T101500Z[.<n>].cilkprof", so that
// a process's windows sort by time.
// The basename is reduced to [A-Za-z0-9._+-] (others become '_'); an empty one is
// "process". Existence is checked now; writers use WriteNewProfileFile so that a name
// taken meanwhile is never overwritten.
std::string UniqueProfilePath(const std::string& dir, const ProcessKey& process);

// "20261125T101500Z": a time (ns since the Unix epoch) to the second, in UTC.
std::string UtcTimestamp(uint64_t unix_ns);

}  // namespace cilkprof::aggregator
