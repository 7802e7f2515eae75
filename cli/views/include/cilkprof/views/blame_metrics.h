// Derived blame metrics (issue 4; HPCToolkit's "total effort" decomposition):
//
//   effort       = work + idleness + overhead + lock_wait             (ns)
//                  (lock_wait, issue 14, when the profile has it: a thread waiting
//                  for a lock is neither working nor idle)
//   % idleness   = 100 x idleness / effort                            (%)
//   % overhead   = 100 x overhead / effort                            (%)
//
// each for a row's inclusive values and, separately, for its exclusive values. They are
// ratios, so they are never summed or stored: MetricColumns (metric_columns.h) appends
// them after the profile's own metrics and computes them from each row's own values
// whenever a row is shown.
//
// The interpretation of a context (the table of the HPCToolkit slides):
//   low idleness,  low overhead   effectively parallel
//   low idleness,  high overhead  coarsen the concurrency granularity
//   high idleness, low overhead   refine the concurrency granularity
//   high idleness, high overhead  change the parallelization strategy
// with "high" meaning at least kHighIdlenessPercent / kHighOverheadPercent of the
// context's effort.
#pragma once

#include <string>

namespace cilkprof::views {

inline constexpr const char* kEffortMetric = "effort";
// Samples in the work/span tool's own code (agent/src/instrumentation.h): not part of
// effort, which describes the user's program.
inline constexpr const char* kInstrumentationMetric = "instrumentation";
inline constexpr const char* kIdlenessPercentMetric = "% idleness";
inline constexpr const char* kOverheadPercentMetric = "% overhead";

inline constexpr double kHighIdlenessPercent = 20.0;
inline constexpr double kHighOverheadPercent = 10.0;

// The interpretation for a context with these percentages of its effort.
std::string InterpretBlame(double idleness_percent, double overhead_percent);

}  // namespace cilkprof::views
