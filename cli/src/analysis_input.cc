#include "analysis_input.h"

#include "cilkprof/aggregator/profile_io.h"
#include "commands.h"
#include "progress.h"

namespace cilkprof::cli {

Result<AnalysisInput> ReadForAnalysis(const std::string& path) {
  AnalysisInput input;
  auto read = aggregator::ReadProfileFile(
      path, [&input](uint32_t, const profile::Node& node) { input.nodes.Add(node); });
  if (!read.ok()) return read.status();
  input.profile = std::move(*read);
  return input;
}

std::optional<AnalysisInput> LoadForAnalysis(const std::string& path, Progress& progress) {
  progress.Stage("reading " + path);
  auto input = ReadForAnalysis(path);
  if (!input.ok()) {
    progress.Clear();
    PrintError(input.status().message());
    return std::nullopt;
  }
  return std::move(*input);
}

}  // namespace cilkprof::cli
