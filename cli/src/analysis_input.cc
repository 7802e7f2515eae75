#include "analysis_input.h"

#include "cilkprof/aggregator/profile_io.h"

namespace cilkprof::cli {

Result<AnalysisInput> ReadForAnalysis(const std::string& path) {
  AnalysisInput input;
  auto read = aggregator::ReadProfileFile(
      path, [&input](uint32_t, const profile::Node& node) { input.nodes.Add(node); });
  if (!read.ok()) return read.status();
  input.profile = std::move(*read);
  return input;
}

}  // namespace cilkprof::cli
