// The metrics the agent records per CCT node, in the order of the columns (MetricId,
// cct.h) and of Hello.metrics. Append new metrics at the end.
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
     "measured between a thread's previous sample and this one; on runtime workers only "
     "samples taken while running user code (state WORKING)"},
    {"idleness", "ns",
     "undirected blame for idle workers: each sample of a worker that is not idle adds "
     "its weight x idle workers / workers not idle to its logical context"},
    {"overhead", "ns",
     "sample weights taken while the runtime did scheduling work (spawn, sync, steal, "
     "fiber switches), at the spawn or sync site that caused it"},
    {"probe", "count", "cilkprof_probe() calls made with this context (tests of logical paths)"},
    {"instrumentation", "ns",
     "sample weights taken while the thread ran the work/span tool's code (its hooks and "
     "program API), at the logical context that called it; never in work, overhead or "
     "idleness (cilkprof run --no-workspan: none)"},
    {"lock_wait", "ns",
     "time the thread waited to acquire a lock, at the lock call's (logical) context, on a "
     "[lock] leaf naming the lock object; with --clock cpu measured at the contended call "
     "and sampled with the period as mean, with --clock wall the waiting thread's samples; "
     "never in work, idleness or overhead"},
    {"lock_blame", "ns",
     "directed blame: the time other threads waited for a lock while this context held it, "
     "charged at the unlock call's (logical) context on a [lock] leaf; over a run it adds "
     "up to lock_wait minus the hand-off after each release (ThreadCounters.lock_*)"},
};

}  // namespace cilkprof::agent
