// `cilkprof view top-down|bottom-up|flat PROFILE` (callsites, strands and locks are
// tables of their own: command_callsites.cc, command_locks.cc): builds the compact tree once, then
// streams the rows the options select to standard output (docs/USER_GUIDE.md).
#include <cstdio>
#include <optional>

#include "analysis_input.h"
#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/render.h"
#include "commands.h"
#include "progress.h"

namespace cilkprof::cli {

views::BuildOptions BuildOptionsOf(const std::string& inline_mode) {
  views::BuildOptions options;
  options.inline_mode = inline_mode == "fold" ? views::InlineMode::kFold : views::InlineMode::kKeep;
  return options;
}

int RunView(const ViewArgs& args) {
  if (args.kind == "callsites") return RunCallSitesView(args);
  if (args.kind == "strands") return RunStrandsView(args);
  if (args.kind == "locks") return RunLocksView(args);
  Progress progress;
  std::optional<AnalysisInput> input = LoadForAnalysis(args.profile, progress);
  if (!input) return kExitFailure;
  progress.Stage("building the " + args.kind + " view");
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
  views::BuildOptions build = BuildOptionsOf(args.inline_mode);
  // Bottom-up rows are functions: a "[lock X]" leaf's values are its lock call's.
  if (kind == views::ViewKind::kBottomUp) build.lock_mode = views::LockMode::kFoldIntoCaller;
  // The tree a view walks: top-down (bottom-up expands from it) or flat.
  views::RowTree tree =
      kind == views::ViewKind::kFlat ? views::BuildFlat(input->profile, input->nodes, build)
                                     : views::BuildTopDown(input->profile, input->nodes, build);
  const std::string header_program = input->profile.process().executable();
  const uint32_t header_pid = input->profile.process().pid();
  input.reset();  // the tree holds all the view needs: free the rest

  auto metric = views::ResolveMetric(tree.metrics(), args.metric);
  if (!metric.ok()) {
    progress.Clear();
    PrintError(args.profile + ": " + metric.status().message());
    return args.metric.empty() ? kExitFailure : kExitUsage;
  }
  options.metric = *metric;
  options.depth = args.depth;
  const bool text = args.format != "json" && args.format != "csv";
  options.threshold_percent = args.threshold_percent.value_or(text ? kDefaultTextThreshold : 0.0);
  options.hot_path = args.hot_path;

  std::optional<views::BottomUp> bottom_up;
  if (kind == views::ViewKind::kBottomUp) {
    bottom_up.emplace(tree);
    if (!args.focus.empty()) {
      if (Status focused = bottom_up->Focus(args.focus); !focused.ok()) {
        progress.Clear();
        PrintError(args.profile + ": " + focused.message());
        return kExitFailure;
      }
    }
  } else if (!args.focus.empty()) {
    auto focused = views::FocusOn(tree, args.focus);
    if (!focused.ok()) {
      progress.Clear();
      PrintError(args.profile + ": " + focused.status().message());
      return kExitFailure;
    }
    tree = std::move(*focused);
  }
  progress.Clear();
  const views::ViewSource source = bottom_up ? views::ViewSource(*bottom_up) : views::ViewSource(tree);
  views::OutputSink out(stdout);
  if (args.format == "json") {
    views::RenderJson(source, options, out);
  } else if (args.format == "csv") {
    views::RenderCsv(source, options, out);
  } else {
    views::ViewHeader header{args.profile, header_program, header_pid};
    if (!args.threshold_percent) header.default_threshold = true;
    views::RenderText(source, kind, options, header, out);
  }
  if (!out.Flush()) {
    PrintError("cannot write the view to standard output");
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
