#include "cilkprof/views/summary.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include <tuple>

#include "cilkprof/views/blame_metrics.h"
#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/units.h"
#include "cilkprof/views/walk.h"

namespace cilkprof::views {
namespace {

std::string Percent(double fraction, int decimals) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f%%", decimals, 100.0 * fraction);
  return buffer;
}

bool AnyBlameSignal(const profile::Profile& profile, const MetricColumns& metrics, const std::vector<double>& totals) {
  if (profile.has_workspan()) return true;
  const auto& t = profile.totals();
  if (t.idle_samples() > 0 || t.overhead_samples() > 0 || t.probe_samples() > 0) return true;
  for (const char* name : {"idleness", "overhead", "probe"}) {
    const size_t m = metrics.Find(name);
    if (m < totals.size() && totals[m] != 0) return true;
  }
  return false;
}

// Whole-program blame and the functions with the most effort, each interpreted.
void SummarizeBlame(const profile::Profile& profile, const MetricColumns& metrics, const std::vector<double>& total,
                    const std::vector<BottomUp::Row>& functions, const LabelTable& labels, size_t top,
                    BlameSummary* out) {
  if (!metrics.has_blame() || !AnyBlameSignal(profile, metrics, total)) return;
  out->present = true;
  const size_t work = metrics.Find("work"), idleness = metrics.Find("idleness"), overhead = metrics.Find("overhead"),
               effort = metrics.Find(kEffortMetric), idle_pct = metrics.Find(kIdlenessPercentMetric),
               overhead_pct = metrics.Find(kOverheadPercentMetric);
  out->work = total[work];
  out->idleness = total[idleness];
  out->overhead = total[overhead];
  out->effort = total[effort];
  out->idleness_percent = total[idle_pct];
  out->overhead_percent = total[overhead_pct];
  const auto& totals = profile.totals();
  out->idle_samples = totals.idle_samples();
  out->idle_ns = static_cast<double>(totals.idle_ns());
  out->overhead_samples = totals.overhead_samples();
  out->unattributed_overhead = totals.unattributed_overhead();
  out->clock = profile.process().clock();
  if (out->idle_ns > 0) out->idleness_skew = (out->idleness - out->idle_ns) / out->idle_ns;

  // Functions (all their contexts merged, recursion counted once) by inclusive effort.
  struct Ranked {
    const BottomUp::Row* row;
    std::vector<double> inclusive, exclusive;  // every column
  };
  std::vector<Ranked> ranked;
  for (const BottomUp::Row& row : functions) {
    Ranked r{&row, std::vector<double>(metrics.size()), std::vector<double>(metrics.size())};
    metrics.Expand(row.inclusive.data(), r.inclusive.data());
    metrics.Expand(row.exclusive.data(), r.exclusive.data());
    ranked.push_back(std::move(r));
  }
  std::sort(ranked.begin(), ranked.end(), [&](const Ranked& a, const Ranked& b) {
    if (a.inclusive[effort] != b.inclusive[effort]) return a.inclusive[effort] > b.inclusive[effort];
    return labels.Name(a.row->label) < labels.Name(b.row->label);
  });
  for (const Ranked& r : ranked) {
    if (out->top_contexts.size() == top) break;
    const double e = r.inclusive[effort];
    if (e <= 0) break;
    // Callers of (nearly) everything that spend nothing themselves (main, the start-up
    // frames above it, wrappers such as cilk::run's lambda) say nothing: skipped, as are
    // the runtime's templates inlined at spawn and sync sites.
    if (out->effort > 0 && e >= 0.9 * out->effort && r.exclusive[effort] <= 0) continue;
    if (r.row->inlined) continue;
    const std::string& name = labels.Name(r.row->label);
    // So are OpenMP's compiler-made wrappers that spend (nearly) nothing themselves:
    // clang's region and task entries (.omp_outlined., .omp_task_entry.) repeat their
    // callees' figures. GCC's outlined regions (f._omp_fn.N) hold the region's code.
    if (name.rfind(".omp_", 0) == 0 && r.exclusive[effort] < 0.05 * e) continue;
    BlameContext c;
    c.name = name;
    c.module = labels.Module(r.row->label);
    c.effort = e;
    c.work = r.inclusive[work];
    c.idleness = r.inclusive[idleness];
    c.overhead = r.inclusive[overhead];
    c.idleness_percent = r.inclusive[idle_pct];
    c.overhead_percent = r.inclusive[overhead_pct];
    c.interpretation = InterpretBlame(c.idleness_percent, c.overhead_percent);
    out->top_contexts.push_back(std::move(c));
  }
}

// All sample weights (ns): every ns metric in the tree (work, overhead,
// instrumentation; idleness is blame, not time of its own) and the idle workers' own.
InstrumentationSummary SummarizeInstrumentation(const profile::Profile& profile, const MetricColumns& metrics,
                                                const std::vector<double>& total) {
  InstrumentationSummary out;
  const size_t instrumentation = metrics.Find(kInstrumentationMetric);
  if (instrumentation >= metrics.stored() || total[instrumentation] <= 0) return out;
  out.present = true;
  out.instrumentation = total[instrumentation];
  out.sampled = static_cast<double>(profile.totals().idle_ns());
  for (const char* name : {"work", "overhead", kInstrumentationMetric}) {
    const size_t m = metrics.Find(name);
    if (m < metrics.stored()) out.sampled += total[m];
  }
  out.share = out.sampled > 0 ? out.instrumentation / out.sampled : 0;
  out.dilation = out.sampled > out.instrumentation ? out.sampled / (out.sampled - out.instrumentation) : 0;
  out.openmp = profile.process().runtime() == "libomp-ompt";
  return out;
}

std::string InstrumentationLine(const InstrumentationSummary& i) {
  char dilation[32];
  std::snprintf(dilation, sizeof dilation, "%.2fx", i.dilation);
  if (i.openmp) {
    // OpenMP (docs/OPENMP.md): each task's creation context is captured when it is
    // created, in the sampled run too; frame pointers make that several times cheaper.
    return FormatDuration(i.instrumentation / 1e9) + " (" + Percent(i.share, 1) +
           " of sampled time) in the profiler's own code (the capture of each task's creation context, and "
           "work/span when measured in this run), kept out of work, overhead and idleness; the run took at least " +
           dilation + " the time it would without it (--unwind fp captures faster, in code built with frame pointers)";
  }
  return FormatDuration(i.instrumentation / 1e9) + " (" + Percent(i.share, 1) +
         " of sampled time) in the work/span tool's code, kept out of work, overhead and idleness; "
         "the run took at least " + dilation + " the time it would without it (cilkprof run measures work and span in a second run unless given --workspan=same)";
}

bool IsRuntimeMetric(const std::string& name) {
  return name == "idleness" || name == "overhead" || name == "probe" || name == kEffortMetric ||
         name == kIdlenessPercentMetric || name == kOverheadPercentMetric;
}

// A function as the views label it: "f", "f (inline)", "?? [libm.so.6]".
std::string FunctionLabel(const std::string& name, const std::string& module, bool inlined) {
  static const std::string kEmpty;
  RowView row;
  row.name = &name;
  row.file = &kEmpty;
  row.module = &module;
  row.inlined = inlined;
  return RowLabel(row);
}

// The idle workers' own measurement beside the blame handed out for them. Under
// --clock cpu a worker asleep takes no samples, so the blame (counted from the
// working threads' samples) exceeds what the idle workers measured themselves.
std::string IdleWorkersLine(const BlameSummary& b) {
  std::string text = std::to_string(b.idle_samples) + " samples, " + FormatDuration(b.idle_ns / 1e9) +
                     " measured by their own clock";
  if (b.idle_ns > 0 && b.idleness > 0) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", b.idleness / b.idle_ns);
    text += std::string(" (the idleness above is ") + ratio + " that";
    if (b.clock == "cpu" && b.idleness > 1.1 * b.idle_ns) text += ": with --clock cpu, workers asleep take no samples";
    text += ")";
  }
  return text;
}

// The cause (deep recursion), what the profile shows of those stacks and what it
// cannot, and where to look instead. The agent's limits are in docs/UNWINDER.md.
std::string DeepStackWarning(const ProfileSummary& s, const std::string& unwind_mode) {
  const double share = s.samples > 0 ? static_cast<double>(s.deep_stack_samples) / static_cast<double>(s.samples) : 0;
  std::string text = std::to_string(s.deep_stack_samples) + " samples (" + Percent(share, 1) +
                     ") were taken in stacks deeper than the agent keeps (deep recursion";
  if (s.deepest_stack > 0) text += "; the deepest walked " + std::to_string(s.deepest_stack) + " frames";
  text += "): each keeps its innermost and outermost frames, and the frames in between";
  if (s.deep_stack_frames_elided > 0 && s.deep_stack_samples > 0) {
    text += " (" + std::to_string(s.deep_stack_frames_elided / s.deep_stack_samples) + " per sample on average)";
  }
  text += std::string(" are elided and shown as one ") + kElidedFramesName +
          " node; self time and the outermost callers are exact, inclusive time of the elided "
          "recursion levels is not; the bottom-up view shows who calls the innermost functions";
  if (s.deep_stack_truncated > 0) {
    text += "; " + std::to_string(s.deep_stack_truncated) + " of them had stacks deeper than " +
            (s.deepest_stack > 0 ? std::to_string(s.deepest_stack) + " frames" : std::string("a sample walks")) +
            " and keep only their innermost frames, under " + kPartialUnwindName +
            " (not an unwinding failure)";
  }
  if (unwind_mode == "dwarf") {
    // The walk of the elided levels is the sample's cost (docs/UNWINDER.md, "Deep stacks").
    text += "; with DWARF unwinding each such sample walks its whole stack at about 0.5 us a frame (5 ms "
            "at 10,000 frames), which slows the program: if it is built with frame pointers, "
            "--unwind fp walks it about 25 times faster";
  }
  return text;
}

// Lock contention: the exact totals, lock_wait's share of effort, the worst lock and
// the context that held it up most.
LockSummary SummarizeLocks(const profile::Profile& profile, const ProfileNodes& nodes, const MetricColumns& metrics,
                           const std::vector<double>& total) {
  LockSummary out;
  const auto& t = profile.totals();
  if (profile.locks_size() == 0 && t.lock_wait_ns() == 0) return out;
  out.present = true;
  out.wait_ns = static_cast<double>(t.lock_wait_ns());
  out.blame_ns = static_cast<double>(t.lock_blame_ns());
  out.unblamed_ns = static_cast<double>(t.lock_unblamed_ns());
  out.open_ns = static_cast<double>(t.lock_wait_open_ns());
  out.acquisitions = t.lock_acquisitions();
  out.contended = t.lock_contended();
  const size_t lock_wait = metrics.Find(kLockWaitMetric), effort = metrics.Find(kEffortMetric),
               work = metrics.Find("work");
  const double waited = lock_wait < metrics.stored() ? total[lock_wait] : 0.0;
  double denominator = effort < metrics.size() ? total[effort] : waited + (work < metrics.stored() ? total[work] : 0);
  out.effort_percent = denominator > 0 ? 100.0 * waited / denominator : 0.0;
  auto rows = LockRows(profile, nodes);
  if (!rows.ok() || rows->empty()) return out;
  out.locks = rows->size();
  const LockRow& worst = rows->front();
  out.has_worst = true;
  out.worst_lock = worst.identity.name;
  out.worst_lock_file = worst.file;
  out.worst_lock_line = worst.line;
  out.worst_lock_kind = worst.kind;
  out.worst_lock_wait_ns = worst.wait_ns;
  if (!worst.holders.empty()) {
    out.has_holder = true;
    out.worst_holder = worst.holders.front();
  }
  if (out.has_holder && out.effort_percent >= kHighLockWaitPercent) {
    const LockContext& h = out.worst_holder;
    out.interpretation = "shrink or split the critical section at " + h.function +
                         (h.file.empty() ? "" : " (" + h.file.substr(h.file.rfind('/') + 1) + ":" +
                                                    std::to_string(h.line) + ")");
  }
  return out;
}

std::string Place(const std::string& file, uint32_t line) {
  if (file.empty()) return "";
  return " (" + file.substr(file.rfind('/') + 1) + ":" + (line ? std::to_string(line) : std::string("?")) + ")";
}

}  // namespace

ProfileSummary Summarize(const profile::Profile& profile, const std::string& profile_path, size_t top,
                         const BuildOptions& options) {
  return Summarize(profile, ProfileNodes::Of(profile), profile_path, top, options);
}

ProfileSummary Summarize(const profile::Profile& profile, const ProfileNodes& nodes, const std::string& profile_path,
                         size_t top, const BuildOptions& options) {
  ProfileSummary summary;
  summary.profile_path = profile_path;
  const auto& process = profile.process();
  summary.program = process.executable();
  summary.pid = process.pid();
  if (process.end_unix_ns() > process.start_unix_ns()) {
    summary.duration_s = static_cast<double>(process.end_unix_ns() - process.start_unix_ns()) / 1e9;
  }
  summary.threads = static_cast<uint32_t>(profile.threads_size());
  const auto& totals = profile.totals();
  summary.samples = totals.samples();
  summary.partial_unwinds = totals.partial_unwinds();
  summary.dropped_samples = totals.dropped_reentrant() + totals.dropped_no_memory();
  if (summary.samples > 0) {
    summary.partial_unwind_rate = static_cast<double>(summary.partial_unwinds) / static_cast<double>(summary.samples);
  }
  summary.deep_stack_samples = totals.deep_stack_samples();
  summary.deep_stack_truncated = totals.deep_stack_truncated();
  summary.deep_stack_frames_elided = totals.deep_stack_frames_elided();
  summary.deepest_stack = totals.deepest_stack();

  // Functions rank with their lock calls' wait and blame as their own (a "[lock X]"
  // leaf is no function).
  BuildOptions folded = options;
  folded.lock_mode = LockMode::kFoldIntoCaller;
  const RowTree top_down = BuildTopDown(profile, nodes, folded);
  const MetricColumns& metrics = top_down.metrics();
  std::vector<double> stored = top_down.context().program_total;
  stored.resize(metrics.stored(), 0.0);
  std::vector<double> total(metrics.size());
  if (metrics.size() > 0) metrics.Expand(stored.data(), total.data());
  for (size_t m = 0; m < metrics.size(); ++m) {
    summary.metric_names.push_back(metrics[m].name);
    summary.metric_units.push_back(metrics[m].unit);
    summary.metric_descriptions.push_back(metrics[m].description);
    summary.metric_totals.push_back(total[m]);
  }
  const std::vector<BottomUp::Row> functions = BottomUp(top_down).Functions();
  const LabelTable& labels = top_down.labels();
  if (auto metric = ResolveMetric(metrics, ""); metric.ok() && *metric < metrics.stored()) {
    const size_t m = *metric;
    summary.metric = metrics[m].name;
    summary.metric_unit = metrics[m].unit;
    // By exclusive value, ties by name, file, line and module (as the views sort).
    std::vector<const BottomUp::Row*> rows;
    for (const BottomUp::Row& row : functions) {
      if (row.exclusive[m] > 0) rows.push_back(&row);
    }
    std::sort(rows.begin(), rows.end(), [&](const BottomUp::Row* a, const BottomUp::Row* b) {
      if (a->exclusive[m] != b->exclusive[m]) return a->exclusive[m] > b->exclusive[m];
      const Label& x = labels[a->label];
      const Label& y = labels[b->label];
      const auto& s = labels.strings();
      return std::tie(s[x.name], s[x.file], x.line, s[x.module]) < std::tie(s[y.name], s[y.file], y.line, s[y.module]);
    });
    for (const BottomUp::Row* row : rows) {
      if (summary.top_functions.size() == top) break;
      const Label& label = labels[row->label];
      summary.top_functions.push_back({labels.Name(row->label), labels.Module(row->label), labels.File(row->label),
                                       label.line, row->inlined, row->exclusive[m], row->inclusive[m]});
    }
  }

  SummarizeBlame(profile, metrics, total, functions, labels, top, &summary.blame);
  summary.instrumentation = SummarizeInstrumentation(profile, metrics, total);
  summary.locks = SummarizeLocks(profile, nodes, metrics, total);

  for (const auto& warning : process.warnings()) summary.warnings.push_back(warning);
  if (summary.samples == 0) {
    summary.warnings.push_back(
        "no samples were recorded: the program may have run for less than one sampling period, "
        "or the agent could not sample it; try a shorter --period or --clock wall");
  }
  if (summary.deep_stack_samples > 0) {
    summary.warnings.push_back(DeepStackWarning(summary, profile.process().unwind_mode()));
  }
  // Samples deeper than the walk's bound are under <partial unwind> too, but their
  // cause is the depth, said above, not missing unwind information.
  const uint64_t unwind_failures = summary.partial_unwinds - std::min(summary.partial_unwinds, summary.deep_stack_truncated);
  if (summary.samples > 0 && static_cast<double>(unwind_failures) >= 0.01 * static_cast<double>(summary.samples)) {
    summary.warnings.push_back(Percent(static_cast<double>(unwind_failures) / static_cast<double>(summary.samples), 1) +
                               " of samples kept only a partial call path (shown under <partial unwind>); "
                               "code without unwind information or frame pointers cuts unwinding short");
  }
  if (summary.dropped_samples > 0) {
    summary.warnings.push_back(std::to_string(summary.dropped_samples) + " samples were dropped (" +
                               std::to_string(totals.dropped_reentrant()) + " re-entrant, " +
                               std::to_string(totals.dropped_no_memory()) + " with the per-thread tree full)");
  }
  if (totals.connections_dropped() > 0) {
    summary.warnings.push_back(std::to_string(totals.connections_dropped()) +
                               " agent connection(s) were dropped for malformed data");
  }
  if (process.end_reason() == "connection lost") {
    summary.warnings.push_back(
        "the program ended without saying goodbye (crashed or killed?); the profile holds the data "
        "flushed until then");
  }
  return summary;
}

std::string RenderSummaryText(const ProfileSummary& s) {
  std::string out;
  auto line = [&](const std::string& key, const std::string& value) {
    out += key + std::string(key.size() < 17 ? 17 - key.size() : 1, ' ') + value + "\n";
  };
  line("Program", s.program.empty() ? "(unknown)" : s.program + (s.pid ? " (pid " + std::to_string(s.pid) + ")" : ""));
  line("Profile", s.profile_path);
  line("Duration", FormatDuration(s.duration_s));
  line("Threads", std::to_string(s.threads));
  line("Samples", std::to_string(s.samples) +
                      (s.dropped_samples ? " (" + std::to_string(s.dropped_samples) + " dropped)" : ""));
  line("Partial unwinds", Percent(s.partial_unwind_rate, 2) + " (" + std::to_string(s.partial_unwinds) + ")");
  for (size_t m = 0; m < s.metric_names.size(); ++m) {
    // Derived blame metrics are shown with Effort, Idleness and Overhead below.
    if (s.blame.present && (s.metric_units[m] == "%" || s.metric_names[m] == kEffortMetric)) continue;
    // Without a runtime the runtime's metrics are zeros that only say "not measured".
    // (Without blame their totals are zero, and effort is only work again.)
    if (!s.blame.present && IsRuntimeMetric(s.metric_names[m])) continue;
    // Shown on its own line below, and only when the tool ran.
    if (s.metric_names[m] == kInstrumentationMetric) continue;
    // Zeros that only say no lock was contended.
    if (!s.locks.present && (s.metric_names[m] == kLockWaitMetric || s.metric_names[m] == kLockBlameMetric)) continue;
    const Scale scale = ChooseScale(s.metric_units[m], s.metric_totals[m]);
    line("Total " + s.metric_names[m],
         s.metric_units[m] == "ns" ? FormatDuration(s.metric_totals[m] / 1e9)
                                   : FormatScaled(s.metric_totals[m], scale) +
                                         (scale.suffix.empty() ? "" : " " + scale.suffix));
  }
  if (s.blame.present) {
    const BlameSummary& b = s.blame;
    const bool lock_effort = std::find(s.metric_names.begin(), s.metric_names.end(), kLockWaitMetric) != s.metric_names.end();
    line("Effort", FormatDuration(b.effort / 1e9) +
                       (lock_effort ? " (work + idleness + overhead + lock_wait)" : " (work + idleness + overhead)"));
    line("Idleness", FormatDuration(b.idleness / 1e9) + " (" + Percent(b.idleness_percent / 100, 1) +
                         " of effort), blamed on the code that ran while workers idled");
    line("Idle workers", IdleWorkersLine(b));
    line("Overhead", FormatDuration(b.overhead / 1e9) + " (" + Percent(b.overhead_percent / 100, 1) +
                         " of effort; " + std::to_string(b.overhead_samples) + " samples, " +
                         std::to_string(b.unattributed_overhead) + " without a user context)");
    line("Interpretation", InterpretBlame(b.idleness_percent, b.overhead_percent));
    if (!b.top_contexts.empty()) {
      out += "Top contexts by effort (idleness, overhead: interpretation):\n";
      for (const BlameContext& c : b.top_contexts) {
        const std::string share = FormatPercent(c.effort, b.effort);
        out += "  " + std::string(6 - std::min<size_t>(6, share.size()), ' ') + share + "  " + FunctionLabel(c.name, c.module, false) +
               "  (" + Percent(c.idleness_percent / 100, 1) + " idle, " + Percent(c.overhead_percent / 100, 1) +
               " overhead: " + c.interpretation + ")\n";
      }
    }
  }
  if (s.locks.present) {
    const LockSummary& l = s.locks;
    std::string locks = Percent(l.effort_percent / 100, 1) + " of effort waiting for " + std::to_string(l.locks) +
                        " contended lock" + (l.locks == 1 ? "" : "s") + " (" + std::to_string(l.contended) +
                        " contended acquisitions)";
    if (l.has_worst) {
      locks += "; worst " + l.worst_lock + Place(l.worst_lock_file, l.worst_lock_line) + ", " +
               FormatDuration(l.worst_lock_wait_ns / 1e9) + " waited";
      if (l.has_holder) {
        locks += ", held up most at " + l.worst_holder.function + Place(l.worst_holder.file, l.worst_holder.line) +
                 " (" + Percent(l.worst_holder.share, 1) + " of its blame)";
      }
    }
    line("Locks", locks + "; see `cilkprof view locks`");
    line("Lock blame", FormatDuration(l.blame_ns / 1e9) + " of " + FormatDuration(l.wait_ns / 1e9) + " waited (" +
                           FormatDuration(l.unblamed_ns / 1e9) + " hand-off, " +
                           (l.open_ns > 0 ? FormatDuration(l.open_ns / 1e9) : std::string("0")) + " open)");
    if (!l.interpretation.empty()) line("Interpretation", l.interpretation);
  }
  if (s.instrumentation.present) line("Instrumentation", InstrumentationLine(s.instrumentation));
  if (!s.top_functions.empty()) {
    const double total = [&] {
      for (size_t m = 0; m < s.metric_names.size(); ++m)
        if (s.metric_names[m] == s.metric) return s.metric_totals[m];
      return 0.0;
    }();
    const Scale scale = ChooseScale(s.metric_unit, total);
    out += "Top functions by exclusive " + s.metric + ":\n";
    std::vector<std::string> values;
    size_t width = 0;
    for (const auto& f : s.top_functions) {
      values.push_back(FormatScaled(f.exclusive, scale) + (scale.suffix.empty() ? "" : " " + scale.suffix));
      width = std::max(width, values.back().size());
    }
    for (size_t i = 0; i < s.top_functions.size(); ++i) {
      const auto& f = s.top_functions[i];
      std::string percent = FormatPercent(f.exclusive, total);
      out += "  " + std::string(6 - std::min<size_t>(6, percent.size()), ' ') + percent + "  " +
             std::string(width - values[i].size(), ' ') + values[i] + "  " + FunctionLabel(f.name, f.module, f.inlined) + "\n";
    }
  }
  for (const auto& warning : s.warnings) out += "Warning: " + warning + "\n";
  return out;
}

std::string RenderSummaryJson(const ProfileSummary& s, const profile::Profile& profile) {
  using Json = nlohmann::ordered_json;
  const auto& process = profile.process();
  Json out;
  out["profile"] = s.profile_path;
  out["program"] = s.program;
  out["command"] = std::vector<std::string>(process.argv().begin(), process.argv().end());
  out["pid"] = s.pid;
  out["duration_s"] = s.duration_s;
  out["threads"] = s.threads;
  out["samples"] = s.samples;
  out["partial_unwinds"] = s.partial_unwinds;
  out["partial_unwind_rate"] = s.partial_unwind_rate;
  out["deep_stack_samples"] = s.deep_stack_samples;
  out["deep_stack_truncated"] = s.deep_stack_truncated;
  out["deep_stack_frames_elided"] = s.deep_stack_frames_elided;
  out["deepest_stack"] = s.deepest_stack;
  out["dropped_samples"] = s.dropped_samples;
  out["clock"] = process.clock();
  out["period_ns"] = process.period_ns();
  out["unwind"] = process.unwind_mode();
  out["end_reason"] = process.end_reason();
  Json metrics = Json::object();
  for (size_t m = 0; m < s.metric_names.size(); ++m) {
    metrics[s.metric_names[m]] = {{"total", s.metric_totals[m]},
                                  {"unit", s.metric_units[m]},
                                  {"description", s.metric_descriptions[m]}};
  }
  out["metrics"] = std::move(metrics);
  // Each metric's total under its own name, for scripts: summary["work"]. The keys
  // above win ("samples" is the sample count from the profile's totals).
  const std::set<std::string> reserved = {"profile", "program", "command", "pid", "duration_s", "threads", "samples",
                                          "partial_unwinds", "partial_unwind_rate", "dropped_samples",
                                          "deep_stack_samples", "deep_stack_truncated",
                                          "deep_stack_frames_elided", "deepest_stack",
                                          "clock", "period_ns", "unwind", "end_reason", "metrics",
                                          "top_functions", "warnings", "idle_samples",
                                          "overhead_samples", "blame", "instrumentation_share", "dilation",
                                          "locks"};
  for (size_t m = 0; m < s.metric_names.size(); ++m) {
    if (!reserved.count(s.metric_names[m])) out[s.metric_names[m]] = s.metric_totals[m];
  }
  if (s.instrumentation.present) {
    out["instrumentation_share"] = s.instrumentation.share;
    out["dilation"] = s.instrumentation.dilation;
  }
  if (s.blame.present) {
    const BlameSummary& b = s.blame;
    out["idle_samples"] = b.idle_samples;
    out["overhead_samples"] = b.overhead_samples;
    Json contexts = Json::array();
    for (const BlameContext& c : b.top_contexts) {
      contexts.push_back({{"name", c.name}, {"module", c.module}, {"effort", c.effort}, {"work", c.work},
                          {"idleness", c.idleness}, {"overhead", c.overhead},
                          {"idleness_percent", c.idleness_percent}, {"overhead_percent", c.overhead_percent},
                          {"interpretation", c.interpretation}});
    }
    out["blame"] = {{"idle_ns", b.idle_ns},
                    {"idleness_skew", b.idleness_skew},
                    {"unattributed_overhead", b.unattributed_overhead},
                    {"interpretation", InterpretBlame(b.idleness_percent, b.overhead_percent)},
                    {"top_contexts", std::move(contexts)}};
  }
  if (s.locks.present) {
    const LockSummary& l = s.locks;
    Json locks = {{"wait_ns", l.wait_ns},       {"blame_ns", l.blame_ns},     {"unblamed_ns", l.unblamed_ns},
                  {"open_ns", l.open_ns},       {"acquisitions", l.acquisitions}, {"contended", l.contended},
                  {"locks", l.locks},           {"effort_percent", l.effort_percent}};
    if (l.has_worst) {
      locks["worst_lock"] = {{"lock", l.worst_lock}, {"file", l.worst_lock_file}, {"line", l.worst_lock_line},
                             {"kind", l.worst_lock_kind}, {"wait_ns", l.worst_lock_wait_ns}};
    }
    if (l.has_holder) {
      const LockContext& h = l.worst_holder;
      locks["worst_holder"] = {{"function", h.function}, {"file", h.file},       {"line", h.line},
                               {"frames", h.frames},     {"blame_ns", h.value}, {"percent", 100.0 * h.share}};
    }
    locks["interpretation"] = l.interpretation;
    out["locks"] = std::move(locks);
  }
  Json top = Json::array();
  for (const auto& f : s.top_functions) {
    top.push_back({{"name", f.name}, {"module", f.module}, {"file", f.file}, {"line", f.line},
                   {"inlined", f.inlined}, {"exclusive", f.exclusive}, {"inclusive", f.inclusive}});
  }
  out["top_functions"] = std::move(top);
  out["warnings"] = s.warnings;
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cilkprof::views
