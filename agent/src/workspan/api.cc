// The program API of cilkprof/cilkprof.h that the work/span tool implements. Exported
// from libcilkprof_agent.so (agent/exports.map); the program declares them weak.
//
// Each call is the tool's code, like a hook: it runs inside an InstrumentationScope so
// that a sample taken in it is `instrumentation`, not the caller's work
// (instrumentation.h).
#include <cstdint>

#include "instrumentation.h"
#include "ompt/ompt_workspan.h"
#include "workspan/engine.h"

#define CILKPROF_WS_EXPORT extern "C" __attribute__((visibility("default")))

using cilkprof::agent::InstrumentationScope;

CILKPROF_WS_EXPORT void cilkprof_charge(uint64_t units) {
  InstrumentationScope in_tool;
  cilkprof::agent::workspan::Charge(units);
  // An OpenMP program's units go to the OMPT tool's clock (ompt_workspan.h); each
  // engine ignores the call unless it measures with the counter clock.
  cilkprof::agent::ompt::workspan::Charge(units);
}

CILKPROF_WS_EXPORT void cilkprof_region_begin(const char* name) {
  InstrumentationScope in_tool;
  cilkprof::agent::workspan::RegionBegin(name, __builtin_return_address(0));
}

CILKPROF_WS_EXPORT void cilkprof_region_end(void) {
  InstrumentationScope in_tool;
  cilkprof::agent::workspan::RegionEnd(__builtin_return_address(0));
}
