// What the call instruction before a return address says: is it a return address at
// all, and which function did that call enter. The frame-pointer walk uses it to tell a
// frame record that belongs to the interrupted function from a value that only looks
// like one (a frameless library function that keeps data in rbp, or leaves its
// caller's rbp there).
//
// Safety: both functions read code bytes before `ra`; ClassifyCallBefore also reads the
// call's PLT stub and GOT slot. `ra` may be garbage, so these reads may fault: call them
// only inside RunGuarded() (fault_guard.h). Async-signal-safe otherwise (plain loads).
#pragma once

#include <stdint.h>

namespace cilkprof::unwinder::internal {

// A function is taken to span at most this many bytes from its entry when deciding
// whether a pc can lie inside the function a call entered. A larger function only sends
// the walk to its slower, exact path.
inline constexpr uintptr_t kMaxFunctionBytes = uintptr_t{64} << 10;

// True if a call instruction (direct, or through a register or memory operand) ends at
// `ra`: what a genuine return address looks like. Reads only the bytes before `ra`.
bool FollowsCall(uintptr_t ra);

enum class CallBefore : uint8_t {
  kNone,         // no call instruction ends at ra: not a return address
  kIndirect,     // a call through a register or memory operand: the callee is unknown
  kCallee,       // the call's target is at or below `pc`, less than kMaxFunctionBytes
                 // from it: the call may have entered the function holding `pc`
  kOtherCallee,  // the call's target cannot be the function holding `pc`
};

// Decodes the call that ends at `ra` and compares its target with `pc`, an address in
// the function the call should have entered. The target of a direct call is followed
// through its PLT stub, and that of a `call *slot(%rip)` (-fno-plt) read from its slot.
CallBefore ClassifyCallBefore(uintptr_t ra, uintptr_t pc);

}  // namespace cilkprof::unwinder::internal
