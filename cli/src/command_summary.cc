// `cilkprof summary PROFILE [--format text|json]`.

#include "analysis_input.h"
#include "cilkprof/views/summary.h"
#include "cilkprof/views/workspan.h"
#include "commands.h"
#include "progress.h"

namespace cilkprof::cli {

int RunSummary(const SummaryArgs& args) {
  Progress progress;
  std::optional<AnalysisInput> input = LoadForAnalysis(args.profile, progress);
  if (!input) return kExitFailure;
  const profile::Profile* profile = &input->profile;
  progress.Stage("summarizing");
  if (args.what_if) {
    progress.Clear();
    auto what_if = args.format == "json" ? views::RenderWhatIfJson(*profile) : views::RenderWhatIfText(*profile);
    if (!what_if.ok()) {
      PrintError(args.profile + " " + what_if.status().message());
      return kExitFailure;
    }
    return WriteStdout(*what_if, "the what-if table");
  }
  const views::ProfileSummary summary =
      views::Summarize(*profile, input->nodes, args.profile, args.top, BuildOptionsOf(args.inline_mode));
  std::string out = args.format == "json" ? views::RenderSummaryJson(summary, *profile)
                                          : views::RenderSummaryText(summary);
  // Work and span, when the profile has them (issue 5).
  if (auto figures = views::WholeProgram(*profile); figures.ok()) {
    out = args.format == "json" ? views::AddWorkSpanToSummaryJson(out, *figures)
                                : out + views::RenderWorkSpanText(*figures);
  }
  progress.Clear();
  return WriteStdout(out, "the summary");
}

}  // namespace cilkprof::cli
