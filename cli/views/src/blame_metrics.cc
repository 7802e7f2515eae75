#include "cilkprof/views/blame_metrics.h"

namespace cilkprof::views {

std::string InterpretBlame(double idleness_percent, double overhead_percent) {
  const bool idle = idleness_percent >= kHighIdlenessPercent;
  const bool overhead = overhead_percent >= kHighOverheadPercent;
  if (!idle && !overhead) return "effectively parallel";
  if (!idle && overhead) return "coarsen the granularity (tasks too small for their scheduling cost)";
  if (idle && !overhead) return "refine the granularity (not enough parallelism to keep workers busy)";
  return "change the parallelization strategy (idle and overhead both high)";
}

}  // namespace cilkprof::views
