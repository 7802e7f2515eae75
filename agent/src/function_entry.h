// The function that holds a code address, from its module's .eh_frame_hdr search table
// (every function the compiler emits unwind tables for has an FDE). Used by the
// work/span engine (a call's caller, workspan/engine.cc) and by lock blame (the
// function that tail-called a lock function, locks/tail_call.h).
//
// Lock-free and async-signal-safe: _dl_find_object (glibc 2.35) and reads of mapped
// tables. Only the encodings GCC, clang and binutils emit on x86-64 are read; anything
// else answers "unknown".
#pragma once

#include <cstdint>

namespace cilkprof::agent {

struct FunctionEntry {
  uintptr_t entry = 0;              // 0: unknown (no module, no table, a gap between functions)
  const void* link_map = nullptr;  // the module's, when the module is known
};

FunctionEntry FunctionEntryOf(uintptr_t address);

}  // namespace cilkprof::agent
