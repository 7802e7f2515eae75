// `--format folded`: collapsed stacks, the input of FlameGraph's flamegraph.pl and of
// speedscope, inferno and the other tools that read Brendan Gregg's format:
//   main;fib;[spawn];fib 1234000
// one line per calling context with time of its own, its functions from the root to
// the leaf separated by ';', then a space and the context's exclusive value of the
// metric --metric picks (work by default), rounded to an integer in the metric's
// unit: nanoseconds for times, a count for samples. Contexts that round to 0 are left
// out.
//
// The lines are the rows of the top-down view (views::BuildTopDown): functions merged
// per calling context, inlined functions as frames of their own, "<partial unwind>"
// and "[deep stack: frames elided]" as the views name them. A logical spawn edge is a
// "[spawn]" frame between the spawned function and its spawner, as in the pprof
// export, and an OpenMP task edge a "[task]" frame between the task's function and
// the function that created it. Lock time (lock_wait, lock_blame) stays with the function that called the
// lock, as in the flat view. --inverted writes each path leaf first (the callers'
// icicle, what flamegraph.pl --reverse draws).
#include <cmath>
#include <string>
#include <vector>

#include "cilkprof/views/build.h"
#include "cilkprof/views/metric_columns.h"
#include "export/exporters.h"

namespace cilkprof::cli::exporters {
namespace {

// A frame's text in a folded line: ';' separates frames and a newline ends the line,
// so neither may appear in a name (C++ names have neither, but a file path might).
std::string FrameText(const std::string& name) {
  std::string text = name;
  for (char& c : text) {
    if (c == ';' || c == '\n' || c == '\r') c = ':';
  }
  return text;
}

}  // namespace

Status WriteFolded(const AnalysisInput& input, const ExportOptions& options, std::ostream& out) {
  views::BuildOptions build;
  build.lock_mode = views::LockMode::kFoldIntoCaller;
  const views::RowTree tree = views::BuildTopDown(input.profile, input.nodes, build);
  const views::MetricColumns& columns = tree.metrics();
  auto metric = views::ResolveMetric(columns, options.metric);
  if (!metric.ok()) return Status::Error(options.profile_path + ": " + metric.status().message());
  if (columns[*metric].unit == "%") {
    return Status::Error(options.profile_path + ": '" + columns[*metric].name +
                         "' is a percentage, not a weight that adds up along a flame graph; give --metric one of "
                         "work, idleness, overhead, samples, effort, ...");
  }
  const size_t column = *metric;
  const bool derived = column >= columns.stored();
  std::vector<double> all(columns.size());

  // Each row's frame text, computed once per label.
  const views::LabelTable& labels = tree.labels();
  std::vector<std::string> text(labels.size());
  std::vector<bool> made(labels.size(), false);
  auto frame_of = [&](uint32_t row) -> const std::string& {
    const views::LabelId label = tree.label(row);
    if (!made[label]) {
      const std::string& name = labels.Name(label);
      const std::string& module = labels.Module(label);
      const std::string base = module.substr(module.rfind('/') == std::string::npos ? 0 : module.rfind('/') + 1);
      // As the views label an unknown function: "?? [libm.so.6]".
      text[label] = FrameText(name != "??" ? name : "?? [" + (base.empty() ? "unknown module" : base) + "]");
      made[label] = true;
    }
    return text[label];
  };

  // Pre-order: the path of a row is its parent's path plus its own frames; the
  // stack holds the path's length at each open row, so the path is one string.
  std::string path;
  std::vector<size_t> length_at(tree.size() > 0 ? tree.size() : 1, 0);
  std::vector<std::string> frames;  // --inverted: the path's frames, for reversing
  std::string line;
  auto weight_of = [&](uint32_t row) {
    if (!derived) return std::llround(tree.exclusive(row)[column]);
    columns.Expand(tree.exclusive(row), all.data());
    return std::llround(all[column]);
  };
  // The root's own values: samples no context was recorded for (as in pprof's export).
  if (tree.size() > 0 && weight_of(0) != 0) out << views::kProgramRootName << ' ' << weight_of(0) << '\n';
  for (uint32_t row = 1; row < tree.size(); ++row) {
    const uint32_t parent = tree.parent(row);
    path.resize(length_at[parent]);
    if (!path.empty()) path += ';';
    if (const char* marker = views::EdgeMarker(tree.edge(row))) {
      path += marker;
      path += ';';
    }
    path += frame_of(row);
    length_at[row] = path.size();

    const long long weight = weight_of(row);
    if (weight == 0) continue;
    if (!options.inverted) {
      out << path << ' ' << weight << '\n';
      continue;
    }
    frames.clear();
    for (size_t start = 0;;) {
      const size_t end = path.find(';', start);
      frames.push_back(path.substr(start, end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    line.clear();
    for (size_t f = frames.size(); f-- > 0;) line += frames[f] + (f == 0 ? "" : ";");
    out << line << ' ' << weight << '\n';
  }
  return Status::Ok();
}

}  // namespace cilkprof::cli::exporters
