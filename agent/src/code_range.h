// Where a module's code lies in memory: the executable segment that holds a given
// address. The agent finds its own text and libunwind's once at start-up and then
// tells, from a return address, whether the agent's own code made a call that it
// also interposes (Contains is async-signal-safe).
#pragma once

#include <cstdint>

namespace cilkprof::agent {

struct CodeRange {
  uintptr_t lo = 0, hi = 0;  // [lo, hi); empty when not found
  bool Contains(const void* address) const {
    const auto pc = reinterpret_cast<uintptr_t>(address);
    return pc >= lo && pc < hi;
  }
};

// The executable PT_LOAD segment of the loaded module that holds `address`; empty when
// none does. Not signal-safe (dl_iterate_phdr takes the loader's lock).
CodeRange TextSegmentOf(const void* address);

}  // namespace cilkprof::agent
