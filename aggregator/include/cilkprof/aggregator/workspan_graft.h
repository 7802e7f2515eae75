// Joining the work/span figures of a second, instrumented run of a program into the
// profile of a sampled run without instrumentation (`cilkprof run --workspan=separate`,
// the default; docs/WORKSPAN.md, "Instrumentation and the sampled profile").
//
// The two runs are two processes: their profiles share no indexes, and each names code
// by (module path, build-id, offset). The graft copies `Profile.workspan` from the
// instrumented profile into the sampled one, mapping every call site's location to the
// sampled profile's location of the same code (adding the module and the location,
// with its symbolized frames, when the sampled run never sampled that address), so the
// views join call sites to the sampled tree exactly as they do for one run.
#pragma once

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

// Copies `instrumented.workspan` into `sampled`, and records the instrumented run
// (WorkSpan.separate_run_pid, separate_run_ns). Refuses, leaving `sampled` unchanged:
// an instrumented profile without work/span figures, a sampled profile that already
// has some, and two profiles of different programs (executable path, or a build-id
// the two runs' modules of that path do not share: the program was rebuilt between the
// runs).
Status GraftWorkSpan(const profile::Profile& instrumented, profile::Profile* sampled);

}  // namespace cilkprof::aggregator
