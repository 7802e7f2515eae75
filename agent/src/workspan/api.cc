// The program API of cilkprof/cilkprof.h that the work/span tool implements. Exported
// from libcilkprof_agent.so (agent/exports.map); the program declares them weak.
#include <cstdint>

#include "workspan/engine.h"

#define CILKPROF_WS_EXPORT extern "C" __attribute__((visibility("default")))

CILKPROF_WS_EXPORT void cilkprof_charge(uint64_t units) { cilkprof::agent::workspan::Charge(units); }

CILKPROF_WS_EXPORT void cilkprof_region_begin(const char* name) {
  cilkprof::agent::workspan::RegionBegin(name, __builtin_return_address(0));
}

CILKPROF_WS_EXPORT void cilkprof_region_end(void) { cilkprof::agent::workspan::RegionEnd(__builtin_return_address(0));
}
