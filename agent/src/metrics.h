// The metrics the agent records per CCT node, in the order of the columns (MetricId,
// cct.h) and of Hello.metrics. Later issues append here (idleness, overhead, ...).
#pragma once

#include "cct.h"

namespace cilkprof::agent {

struct MetricInfo {
  const char* name;
  const char* unit;
  const char* description;
};

inline constexpr MetricInfo kMetricInfo[kMetricCount] = {
    {"samples", "count", "samples taken with this context as the innermost frame"},
    {"work", "ns",
     "time of the sampling clock (thread CPU time, or wall time with --clock wall) "
     "measured between a thread's previous sample and this one"},
};

}  // namespace cilkprof::agent
