// `cilkprof summary PROFILE [--format text|json]`.
#include <cstdio>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/summary.h"
#include "commands.h"

namespace cilkprof::cli {

int RunSummary(const SummaryArgs& args) {
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  const views::ProfileSummary summary = views::Summarize(*profile, args.profile, args.top);
  const std::string out = args.format == "json" ? views::RenderSummaryJson(summary, *profile)
                                                : views::RenderSummaryText(summary);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintError("cannot write the summary to standard output");
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
