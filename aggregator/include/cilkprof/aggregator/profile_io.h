// Reading and writing profile files (format: proto/cilkprof/profile.proto, header).
#pragma once

#include <string>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

inline constexpr uint32_t kProfileFormatVersion = 1;

// Writes atomically: a temporary file in the same directory, fsync, rename. Never
// leaves a half-written file at `path`.
Status WriteProfileFile(const std::string& path, const profile::Profile& profile);

// Reads and validates (magic, version, length, checksum, parse, node/location indices
// in range, parents before children). Errors name the file and say what is wrong:
// "x.cilkprof: truncated (expected 4096 payload bytes, found 1000); the profile was
// not completely written".
Result<profile::Profile> ReadProfileFile(const std::string& path);

}  // namespace cilkprof::aggregator
