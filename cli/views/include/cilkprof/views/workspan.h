// Views of the work/span instrumentation (issue 5; docs/WORKSPAN.md): the call-site
// table (`cilkprof view callsites`), the Cilkview-style whole-program block and
// speedup table (`cilkprof summary`), the causal what-if (`summary --what-if`) and
// Cilkscale's CSV (`cilkprof export --format cilkscale-csv`). Pure functions of a
// profile; a profile without Profile.workspan yields Status errors that say how to
// record one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::views {

// One call site, symbolized (docs/WORKSPAN.md "Call sites"):
//  call  (a call instruction): caller = the function holding it, file:line = its line;
//        callee = the function called (its first scope's, or its entry's function);
//        one row per caller, callee and line (call instructions of one source call add up);
//  spawn: caller = the spawning function, file:line = the spawn's line; callee = the
//        function the spawned callable calls, else the spawned callable's type (the
//        template argument of cilk::scope::spawn), else "(spawned code)".
// Functions of the Cilk library's templates (cilk::...) are skipped in favour of the
// user function they are inlined into.
struct CallSiteRow {
  std::string caller, callee, file;
  uint32_t line = 0;
  std::string kind;  // "call" or "spawn"
  uint64_t count = 0;
  double work_on_work = 0, span_on_work = 0, work_on_span = 0, span_on_span = 0;
  double burdened_span_on_work = 0;
  double parallelism = 0;    // work_on_work / span_on_work; 0 when the span is 0
  double span_percent = 0;   // span_on_span / the program's span, in percent
};

struct WorkSpanFigures {
  std::string clock, unit;
  double work = 0, span = 0, burdened_span = 0;
  double parallelism = 0, burdened_parallelism = 0;
  uint64_t spawns = 0, syncs = 0, computations = 0;
  double average_maximal_strand = 0;  // work / (1 + 2 spawns + syncs)
  double burden = 0;
  struct Speedup {
    uint32_t p = 0;
    double lower = 0, upper = 0;
  };
  std::vector<Speedup> speedup;  // P = 1, 2, 4, ..., 256
  bool incomplete = false;
  uint64_t sites_dropped = 0, regions_dropped = 0;
  // A second, instrumented run measured them (WorkSpan.separate_run_pid; 0: the
  // sampled run itself), and its wall-clock time in seconds.
  uint32_t separate_run_pid = 0;
  double separate_run_s = 0;
  // What produced them (WorkSpan.model): empty for the Cilk runtime, "openmp tasks
  // (<runtime>)" for OpenMP task graphs; and OpenMP tasks with depend clauses, whose
  // dependences are not in the measured dag.
  std::string model;
  uint64_t tasks_with_dependences = 0;
};

// The user function's frame of a work/span location (the innermost frame not in the
// Cilk library's templates, else the outermost); null when the location is unknown.
const profile::SourceFrame* UserFrameAt(const profile::Profile& profile, uint32_t location);
// The callable a spawn at `location` passed (cilk::scope::spawn<F>'s F), or "".
std::string SpawnedCallableAt(const profile::Profile& profile, uint32_t location);

// Fails when the profile has no work/span data.
Result<std::vector<CallSiteRow>> CallSiteRows(const profile::Profile& profile);
Result<WorkSpanFigures> WholeProgram(const profile::Profile& profile);

// The columns `--sort` accepts (JSON key names; "work-on-work" spellings too).
// Numbers sort largest first, text alphabetically; ties keep work-on-work order.
Status SortCallSites(std::vector<CallSiteRow>* rows, const std::string& column);

std::string RenderCallSitesText(const std::vector<CallSiteRow>& rows, const std::string& unit);
// An array of objects with exactly the keys caller, callee, file, line, kind, count,
// work_on_work, span_on_work, work_on_span, span_on_span, parallelism.
std::string RenderCallSitesJson(const std::vector<CallSiteRow>& rows);
std::string RenderCallSitesCsv(const std::vector<CallSiteRow>& rows);

// The Cilkview-style block and the speedup table, for the end of `cilkprof summary`.
std::string RenderWorkSpanText(const WorkSpanFigures& figures);
// Adds work, span, burdened_span, parallelism, burdened_parallelism, spawns, syncs,
// average_maximal_strand, speedup [{p, lower, upper}] (and workspan_unit) to the
// summary's JSON object text; with work/span data the key `work` is T1 (the sampled
// work total stays in metrics.work.total).
std::string AddWorkSpanToSummaryJson(const std::string& summary_json, const WorkSpanFigures& figures);

// The causal what-if (TaskProf): parallelism if the regions' critical work were
// 2..32 times smaller, all regions together and each alone.
Result<std::string> RenderWhatIfText(const profile::Profile& profile);
Result<std::string> RenderWhatIfJson(const profile::Profile& profile);

// Cilkscale's CSV: tag,work (u),span (u),parallelism,burdened_span (u),burdened_parallelism,
// one row per call site (tag "<kind> <caller> -> <callee> <file>:<line>"), then the
// whole program with an empty tag.
Result<std::string> RenderCilkscaleCsv(const profile::Profile& profile);

}  // namespace cilkprof::views
