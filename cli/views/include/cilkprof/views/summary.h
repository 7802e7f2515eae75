// The one-screen summary of a profile (`cilkprof summary`, and what `cilkprof run`
// prints when the program ends) and its JSON form, a stable contract.
#pragma once

#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/locks.h"

namespace cilkprof::views {

struct TopFunction {
  std::string name;
  std::string module;
  std::string file;
  uint32_t line = 0;
  bool inlined = false;  // inlined code everywhere it ran: shown "(inline)"
  double exclusive = 0;  // of the summary metric, all contexts merged
  double inclusive = 0;  // counted once under recursion
};

// A context ranked by effort, with its blame interpretation (blame_metrics.h).
struct BlameContext {
  std::string name;
  std::string module;
  double effort = 0;  // inclusive, all contexts of the function merged
  double work = 0, idleness = 0, overhead = 0;
  double idleness_percent = 0, overhead_percent = 0;
  std::string interpretation;
};

// Whole-program blame (profiles recorded with idleness and overhead).
struct BlameSummary {
  // The profile has the blame metrics and a task-parallel runtime was seen (blame,
  // overhead, probe samples or work/span data): programs without one get no
  // idleness or overhead lines.
  bool present = false;
  double work = 0, idleness = 0, overhead = 0, effort = 0;
  double idleness_percent = 0, overhead_percent = 0;
  uint64_t idle_samples = 0;           // samples of idle workers (not in the tree)
  double idle_ns = 0;                  // their total weight: the idle time measured
  uint64_t overhead_samples = 0;
  uint64_t unattributed_overhead = 0;  // overhead samples with no logical context
  // (idleness handed out - idle time measured) / idle time measured; 0 without idle time.
  double idleness_skew = 0;
  std::string clock;  // "cpu" or "wall": with cpu, workers asleep take no samples
  std::vector<BlameContext> top_contexts;
};

// The work/span tool's share of the samples (docs/WORKSPAN.md, "Instrumentation and
// the sampled profile"): `instrumentation` is kept out of work, overhead and idleness,
// and the run was slower than an uninstrumented one by about `dilation`.
struct InstrumentationSummary {
  bool present = false;  // the profile has the metric and some of it
  double instrumentation = 0;  // ns of samples in the tool's code
  double sampled = 0;          // ns of all samples: in the tree, and the idle workers'
  double share = 0;            // instrumentation / sampled
  double dilation = 1;         // sampled / (sampled - instrumentation): a lower bound
                               // (the tool also slows the code around its hooks)
  // The process ran on libomp through OMPT (docs/OPENMP.md): the instrumentation
  // includes the capture of every task's creation context, in the sampled run too.
  bool openmp = false;
};

// Lock contention (issue 14; locks.h): present when some thread waited for a lock.
struct LockSummary {
  bool present = false;
  // Exact totals (Totals.lock_*): wait = blame + unblamed hand-off; open apart.
  double wait_ns = 0, blame_ns = 0, unblamed_ns = 0, open_ns = 0;
  uint64_t acquisitions = 0, contended = 0;
  size_t locks = 0;             // locks some thread waited for
  double effort_percent = 0;    // the tree's lock_wait, percent of effort (of work + lock_wait without blame)
  bool has_worst = false;       // the worst lock, by wait, and its worst holder context
  std::string worst_lock, worst_lock_file, worst_lock_kind;
  uint32_t worst_lock_line = 0;
  double worst_lock_wait_ns = 0;
  bool has_holder = false;
  LockContext worst_holder;
  // "shrink or split the critical section at F (file:line)" when lock waits are at
  // least kHighLockWaitPercent of effort and a holder is known; else "".
  std::string interpretation;
};

// Waiting for locks worth the interpretation: like overhead (blame_metrics.h), a tenth
// of the effort lost is a fix worth making before any other.
inline constexpr double kHighLockWaitPercent = 10.0;

struct ProfileSummary {
  std::string profile_path;
  std::string program;
  uint32_t pid = 0;
  double duration_s = 0;
  uint32_t threads = 0;
  uint64_t samples = 0;
  uint64_t partial_unwinds = 0;
  uint64_t dropped_samples = 0;  // re-entrant + arena full
  double partial_unwind_rate = 0;  // partial_unwinds / samples; 0 without samples
  // Deep stacks (Totals, docs/UNWINDER.md "Deep stacks"): samples kept with frames
  // elided, of those the ones deeper than the walk's bound, and the deepest stack.
  uint64_t deep_stack_samples = 0;
  uint64_t deep_stack_truncated = 0;
  uint64_t deep_stack_frames_elided = 0;
  uint64_t deepest_stack = 0;
  std::string metric;              // the metric top functions are ranked by ("work")
  std::string metric_unit;
  std::vector<std::string> metric_names;
  std::vector<std::string> metric_units;
  std::vector<std::string> metric_descriptions;  // sampled metrics, then derived ones (blame)
  std::vector<double> metric_totals;
  std::vector<TopFunction> top_functions;
  std::vector<std::string> warnings;  // the profile's own, then ours (partial unwinds, drops)
  BlameSummary blame;
  InstrumentationSummary instrumentation;
  LockSummary locks;
};

// `top` functions by exclusive value of the default metric ("work" when present).
// Costs one pass over the function-level tree (bottom_up.h's Functions()).
ProfileSummary Summarize(const profile::Profile& profile, const std::string& profile_path, size_t top = 10,
                         const BuildOptions& options = {});
// The same for a profile whose nodes are in columns (build.h).
ProfileSummary Summarize(const profile::Profile& profile, const ProfileNodes& nodes, const std::string& profile_path,
                         size_t top = 10, const BuildOptions& options = {});

std::string RenderSummaryText(const ProfileSummary& summary);

// One object: profile, program, pid, duration_s, threads, samples, partial_unwinds,
// partial_unwind_rate, dropped_samples, clock, period_ns, unwind, end_reason,
// metrics ({name: {total, unit, description}}), each metric's total under its own
// name (unless the name is one of the keys above: with blame, `work`, `idleness`,
// `overhead`, `effort`, `% idleness`, `% overhead`), idle_samples, overhead_samples,
// blame ({idle_ns, idleness_skew, unattributed_overhead, top_contexts: [{name, module,
// effort, work, idleness, overhead, idleness_percent, overhead_percent,
// interpretation}]}, only with blame metrics), top_functions ([{name, module, file,
// line, inlined, exclusive, inclusive}]), locks ({wait_ns, blame_ns, unblamed_ns,
// open_ns, acquisitions, contended, locks, effort_percent, worst_lock {lock, file, line,
// kind, wait_ns}, worst_holder {function, file, line, frames, blame_ns, percent},
// interpretation}, only with lock data), warnings.
std::string RenderSummaryJson(const ProfileSummary& summary, const profile::Profile& profile);

}  // namespace cilkprof::views
