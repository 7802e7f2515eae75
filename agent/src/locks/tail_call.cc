#include "locks/tail_call.h"

#include <cstring>

#include "agent_state.h"
#include "cilkprof/unwinder/fault_guard.h"
#include "function_entry.h"
#include "runtime_view.h"

namespace cilkprof::agent::locks {
namespace {

struct Decode {
  uintptr_t return_address = 0;
  uintptr_t target = 0;  // what the call before the return address reached; 0: unknown
};

int32_t S32(const unsigned char* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uintptr_t Slot(uintptr_t address) {
  uintptr_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
  return v;
}

// Under the fault guard: the call's target, through a PLT stub to the GOT slot's value.
void DecodeCall(void* arg) {
  auto* d = static_cast<Decode*>(arg);
  const auto* r = reinterpret_cast<const unsigned char*>(d->return_address);
  uintptr_t target = 0;
  if (r[-6] == 0xFF && r[-5] == 0x15) {  // call *disp32(%rip): -fno-plt
    target = Slot(d->return_address + S32(r - 4));
  } else if (r[-5] == 0xE8) {  // call rel32
    target = d->return_address + S32(r - 4);
    // A PLT stub: [endbr64] [bnd] jmp *disp32(%rip).
    const auto* s = reinterpret_cast<const unsigned char*>(target);
    if (s[0] == 0xF3 && s[1] == 0x0F && s[2] == 0x1E && s[3] == 0xFA) s += 4;
    if (s[0] == 0xF2) s += 1;
    if (s[0] == 0xFF && s[1] == 0x25) target = Slot(reinterpret_cast<uintptr_t>(s + 6) + S32(s + 2));
  }
  d->target = target;
}

// The call reached the runtime's library (a module whose frames the unwinder elides):
// the runtime made the lock call and reported it (OMPT's mutex callbacks), no tail call.
bool InElidedCode(uintptr_t target) {
  uint32_t count = 0;
  const unwinder::CodeRange* ranges = ElidedRanges(&count);
  for (uint32_t i = 0; i < count; ++i) {
    if (ranges[i].Contains(target)) return true;
  }
  return false;
}

}  // namespace

uintptr_t TailCaller(uintptr_t return_address) {
  if (return_address < 4096) return 0;
  Decode d;
  d.return_address = return_address;
  if (unwinder::RunGuarded(DecodeCall, &d) != unwinder::GuardOutcome::kCompleted || d.target == 0) return 0;
  if (CalledFromAgent(reinterpret_cast<const void*>(d.target))) return 0;  // it called us: no tail call
  if (InElidedCode(d.target)) return 0;
  // Only a function's very entry: a lazy PLT slot not yet bound points back into the PLT.
  return FunctionEntryOf(d.target).entry == d.target ? d.target : 0;
}

}  // namespace cilkprof::agent::locks
