// Reading a profile file for analysis: its tables as a Profile, its nodes in columns
// (views/profile_nodes.h), never one protobuf object per node.
#pragma once

#include <optional>
#include <string>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"
#include "cilkprof/views/profile_nodes.h"

namespace cilkprof::cli {

struct AnalysisInput {
  profile::Profile profile;  // without nodes
  views::ProfileNodes nodes;
};

// Errors are the profile reader's (aggregator/profile_io.h).
Result<AnalysisInput> ReadForAnalysis(const std::string& path);

class Progress;
// For the commands: reads with a progress stage shown, and on failure clears it and
// prints the error (nullopt).
std::optional<AnalysisInput> LoadForAnalysis(const std::string& path, Progress& progress);

}  // namespace cilkprof::cli
