// The one-screen summary of a profile (`cilkprof summary`, and what `cilkprof run`
// prints when the program ends) and its JSON form, a stable contract.
#pragma once

#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"

namespace cilkprof::views {

struct TopFunction {
  std::string name;
  std::string module;
  std::string file;
  uint32_t line = 0;
  double exclusive = 0;  // of the summary metric, all contexts merged
  double inclusive = 0;  // counted once under recursion
};

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
  std::string metric;              // the metric top functions are ranked by ("work")
  std::string metric_unit;
  std::vector<std::string> metric_names;
  std::vector<std::string> metric_units;
  std::vector<double> metric_totals;
  std::vector<TopFunction> top_functions;
  std::vector<std::string> warnings;  // the profile's own, then ours (partial unwinds, drops)
};

// `top` functions by exclusive value of the default metric ("work" when present).
ProfileSummary Summarize(const profile::Profile& profile, const std::string& profile_path,
                         size_t top = 10);

std::string RenderSummaryText(const ProfileSummary& summary);

// One object: profile, program, pid, duration_s, threads, samples, partial_unwinds,
// partial_unwind_rate, dropped_samples, clock, period_ns, unwind, end_reason,
// metrics ({name: {total, unit, description}}), each metric's total under its own
// name (unless the name is one of the keys above), top_functions, warnings.
std::string RenderSummaryJson(const ProfileSummary& summary, const profile::Profile& profile);

}  // namespace cilkprof::views
