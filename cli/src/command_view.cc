// `cilkprof view top-down|bottom-up|flat PROFILE` and `cilkprof summary PROFILE`.
#include <iostream>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/blame_metrics.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/render.h"
#include "commands.h"

namespace cilkprof::cli {

int RunView(const ViewArgs& args) {
  if (args.kind == "callsites") return RunCallSitesView(args);
  if (args.kind == "strands") return RunStrandsView(args);
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  views::ViewKind kind = views::ViewKind::kTopDown;
  views::ViewOptions options;
  options.sort_key = views::SortKey::kInclusive;
  if (args.kind == "bottom-up") {
    kind = views::ViewKind::kBottomUp;
    options.sort_key = views::SortKey::kExclusive;
  } else if (args.kind == "flat") {
    kind = views::ViewKind::kFlat;
    options.sort_key = views::SortKey::kExclusive;
  }
  views::ViewTree tree;
  switch (kind) {
    case views::ViewKind::kTopDown: tree = views::BuildTopDown(*profile); break;
    case views::ViewKind::kBottomUp: tree = views::BuildBottomUp(views::BuildTopDown(*profile)); break;
    case views::ViewKind::kFlat: tree = views::BuildFlat(*profile); break;
  }
  views::AddBlameMetrics(&tree);  // effort, % idleness, % overhead (after focus, below)
  auto metric = views::ResolveMetric(tree, args.metric);
  if (!metric.ok()) {
    PrintError(args.profile + ": " + metric.status().message());
    return args.metric.empty() ? kExitFailure : kExitUsage;
  }
  options.metric = *metric;
  options.depth = args.depth;
  options.threshold_percent = args.threshold_percent;
  options.hot_path = args.hot_path;
  if (!args.focus.empty()) {
    auto focused = views::FocusOn(tree, args.focus);
    if (!focused.ok()) {
      PrintError(args.profile + ": " + focused.status().message());
      return kExitFailure;
    }
    tree = std::move(*focused);
    views::AddBlameMetrics(&tree);  // ratios are recomputed, never summed by the focus
  }
  const views::ViewTree pruned = views::Prune(tree, options);
  std::string out;
  if (args.format == "json") {
    out = views::RenderJson(pruned);
  } else if (args.format == "csv") {
    out = views::RenderCsv(pruned);
  } else {
    views::ViewHeader header{args.profile, profile->process().executable(), profile->process().pid()};
    out = views::RenderText(pruned, kind, options, header);
  }
  return WriteStdout(out, "the view");
}

}  // namespace cilkprof::cli
