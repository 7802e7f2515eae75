// Decoding the call before a return address (x86-64). See call_site.h.
#include "call_site.h"

#include <initializer_list>

namespace cilkprof::unwinder::internal {
namespace {

using Bytes = const volatile uint8_t*;

uintptr_t LoadWord(uintptr_t address) { return *reinterpret_cast<const volatile uintptr_t*>(address); }

// The address a rel32 operand at `operand` designates, relative to `next_instruction`.
uintptr_t Displace(uintptr_t next_instruction, Bytes operand) {
  uint32_t rel = 0;
  for (int i = 0; i < 4; ++i) rel |= static_cast<uint32_t>(operand[i]) << (8 * i);
  return next_instruction + static_cast<uintptr_t>(static_cast<int64_t>(static_cast<int32_t>(rel)));
}

enum class CallKind : uint8_t { kNone, kDirect, kThroughSlot, kIndirect };

struct Call {
  CallKind kind = CallKind::kNone;
  uintptr_t operand = 0;  // kDirect: the target; kThroughSlot: the slot holding it
};

Call Decode(uintptr_t ra) {
  if (ra < 4096 + 8) return {};
  auto b = reinterpret_cast<Bytes>(ra);
  if (b[-5] == 0xe8) return {CallKind::kDirect, Displace(ra, b - 4)};               // call rel32
  if (b[-6] == 0xff && b[-5] == 0x15) return {CallKind::kThroughSlot, Displace(ra, b - 4)};  // call *slot(%rip)
  // call r/m64: ff /2, with a ModRM byte and 0, 1 or 4 displacement bytes (and a SIB).
  for (int length : {2, 3, 4, 6, 7}) {
    if (b[-length] == 0xff && (b[-length + 1] & 0x38) == 0x10) return {CallKind::kIndirect, 0};
  }
  return {};
}

// The function a PLT stub jumps to, read from its GOT slot, or `target` itself when it
// is not a stub. Stubs are `jmp *slot(%rip)` (ff 25), after an endbr64 (f3 0f 1e fa) and
// a bnd prefix (f2) in .plt.sec. Before lazy binding the slot points back into the PLT,
// which then fails the range check like any other wrong target.
uintptr_t ThroughPltStub(uintptr_t target) {
  uintptr_t at = target;
  auto p = reinterpret_cast<Bytes>(at);
  if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) at += 4;
  if (reinterpret_cast<Bytes>(at)[0] == 0xf2) at += 1;
  auto jmp = reinterpret_cast<Bytes>(at);
  if (jmp[0] != 0xff || jmp[1] != 0x25) return target;
  return LoadWord(Displace(at + 6, jmp + 2));
}

}  // namespace

bool FollowsCall(uintptr_t ra) { return Decode(ra).kind != CallKind::kNone; }

CallBefore ClassifyCallBefore(uintptr_t ra, uintptr_t pc) {
  const Call call = Decode(ra);
  uintptr_t target = 0;
  switch (call.kind) {
    case CallKind::kNone:
      return CallBefore::kNone;
    case CallKind::kIndirect:
      return CallBefore::kIndirect;
    case CallKind::kDirect:
      target = ThroughPltStub(call.operand);
      break;
    case CallKind::kThroughSlot:
      target = LoadWord(call.operand);
      break;
  }
  return pc >= target && pc - target < kMaxFunctionBytes ? CallBefore::kCallee : CallBefore::kOtherCallee;
}

}  // namespace cilkprof::unwinder::internal
