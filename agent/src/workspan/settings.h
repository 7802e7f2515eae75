// The work/span tools' configuration from the environment (docs/WORKSPAN.md), shared by
// the Cilk runtime's tool (attach.cc) and the OpenMP one (ompt/ompt_workspan_attach.cc):
//   CILKPROF_WORKSPAN   1 (default) or 0
//   CILKPROF_WS_CLOCK   tsc (default), monotonic or counter; CILKPROF_CLOCK=counter also
//                       selects the counter clock
//   CILKPROF_BURDEN     the burden of one spawn or task creation, in cycles for the tsc
//                       clock, in the clock's unit otherwise; default 15000
// An invalid value is logged (log.h) and the default used. Not signal-safe; called once,
// at a tool's set-up.
#pragma once

#include <cstdint>

#include "workspan/engine.h"
#include "workspan/report.h"

namespace cilkprof::agent::workspan {

// The variable's value, or null when it is unset or empty.
const char* Env(const char* name);

// CILKPROF_WORKSPAN: false when it is "0".
bool WorkSpanEnabled();

struct ClockSettings {
  ClockKind clock = ClockKind::kTsc;
  double ns_per_tick = 1;      // the TSC's calibration, 1 for the other clocks
  uint64_t burden_ticks = 15000;
};

// CILKPROF_WS_CLOCK and CILKPROF_BURDEN; the tsc clock is calibrated here against
// CLOCK_MONOTONIC (a ~5 ms spin), or replaced by monotonic when the TSC is not
// invariant (logged).
ClockSettings ReadClockSettings();

// The report's clock, unit and burden for `settings` (ReportUnits::model left empty).
ReportUnits UnitsOf(const ClockSettings& settings);

}  // namespace cilkprof::agent::workspan
