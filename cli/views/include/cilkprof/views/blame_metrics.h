// Derived blame metrics (issue 4; HPCToolkit's "total effort" decomposition):
//
//   effort       = work + idleness + overhead                         (ns)
//   % idleness   = 100 x idleness / effort                            (%)
//   % overhead   = 100 x overhead / effort                            (%)
//
// each for a row's inclusive values and, separately, for its exclusive values. They are
// ratios, so they are never summed: AddBlameMetrics() appends the three columns to a
// finished tree and computes them from each row's own sampled values; run it again
// after anything that recomputes sampled values (focus, bottom-up) — views call it last.
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

#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {

inline constexpr const char* kEffortMetric = "effort";
inline constexpr const char* kIdlenessPercentMetric = "% idleness";
inline constexpr const char* kOverheadPercentMetric = "% overhead";

inline constexpr double kHighIdlenessPercent = 20.0;
inline constexpr double kHighOverheadPercent = 10.0;

// True when the tree has the sampled blame metrics (a profile of a program on a
// runtime, recorded by an agent with blame): `work` and `idleness` and `overhead`.
bool HasBlameMetrics(const ViewTree& tree);

// Appends (or recomputes, if present) effort, % idleness and % overhead for every row
// and for the program totals. No-op without the sampled blame metrics.
void AddBlameMetrics(ViewTree* tree);

// The interpretation for a context with these percentages of its effort.
std::string InterpretBlame(double idleness_percent, double overhead_percent);

}  // namespace cilkprof::views
