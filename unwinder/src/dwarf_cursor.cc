// DWARF-mode cursor over nongnu libunwind, local address space only.
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <string.h>

#include "cilkprof/unwinder/cursor.h"

namespace cilkprof::unwinder {
namespace {

// On x86-64 Linux libunwind's unw_context_t is the kernel's ucontext_t, so the third
// argument of an SA_SIGINFO handler can be handed to unw_init_local2 as it is.
static_assert(sizeof(unw_context_t) == sizeof(ucontext_t), "unw_context_t is not ucontext_t");

unw_cursor_t* AsCursor(uintptr_t* storage) { return reinterpret_cast<unw_cursor_t*>(storage); }

}  // namespace

bool DwarfCursor::InitFromContext(const ucontext_t* context) {
  static_assert(sizeof(cursor_) >= sizeof(unw_cursor_t), "DwarfCursor::kCursorWords too small");
  if (context == nullptr) return false;
  // libunwind only reads the context in local mode unless unw_set_reg is called.
  auto* uc = reinterpret_cast<unw_context_t*>(const_cast<ucontext_t*>(context));
  if (unw_init_local2(AsCursor(cursor_), uc, UNW_INIT_SIGNAL_FRAME) < 0) return false;
  pc_is_return_address_ = false;
  return LoadRegisters();
}

bool DwarfCursor::InitFromSavedRegs(const cilkprof_saved_regs_t& regs) {
  memset(&saved_context_, 0, sizeof(saved_context_));
  greg_t* g = saved_context_.uc_mcontext.gregs;
  g[REG_RIP] = static_cast<greg_t>(regs.pc);
  g[REG_RSP] = static_cast<greg_t>(regs.sp);
  g[REG_RBP] = static_cast<greg_t>(regs.fp);
  g[REG_RBX] = static_cast<greg_t>(regs.rbx);
  g[REG_R12] = static_cast<greg_t>(regs.r12);
  g[REG_R13] = static_cast<greg_t>(regs.r13);
  g[REG_R14] = static_cast<greg_t>(regs.r14);
  g[REG_R15] = static_cast<greg_t>(regs.r15);
  // Flags 0: pc is a return address, so libunwind looks up the CFI of pc - 1.
  auto* uc = reinterpret_cast<unw_context_t*>(&saved_context_);
  if (unw_init_local2(AsCursor(cursor_), uc, 0) < 0) return false;
  pc_is_return_address_ = true;
  return LoadRegisters();
}

bool DwarfCursor::LoadRegisters() {
  unw_word_t ip = 0;
  unw_word_t sp = 0;
  unw_word_t fp = 0;
  if (unw_get_reg(AsCursor(cursor_), UNW_REG_IP, &ip) < 0 ||
      unw_get_reg(AsCursor(cursor_), UNW_REG_SP, &sp) < 0)
    return false;
  if (unw_get_reg(AsCursor(cursor_), UNW_X86_64_RBP, &fp) < 0) fp = 0;
  pc_ = ip;
  sp_ = sp;
  fp_ = fp;
  return true;
}

StepResult DwarfCursor::Step() {
  unw_cursor_t* cursor = AsCursor(cursor_);
  // Leaving a signal trampoline lands on an interrupted pc, not a return address, and
  // may move to another stack (sigaltstack), so sp need not grow across it.
  const bool leaving_signal_frame = unw_is_signal_frame(cursor) > 0;
  const uintptr_t old_pc = pc_;
  const uintptr_t old_sp = sp_;
  const int stepped = unw_step(cursor);
  if (stepped == 0) return StepResult::kEnd;
  if (stepped < 0) return StepResult::kBadFrame;
  if (!LoadRegisters()) return StepResult::kBadFrame;
  if (pc_ == 0) return StepResult::kEnd;  // libunwind's own end marker on some paths
  // Loop detection: a caller's frame lies above its callee's. A frame that does not
  // move sp outward would make the walk revisit the same frames.
  if (leaving_signal_frame) {
    if (sp_ == old_sp && pc_ == old_pc) return StepResult::kBadFrame;
  } else if (sp_ <= old_sp) {
    return StepResult::kBadFrame;
  }
  pc_is_return_address_ = !leaving_signal_frame;
  return StepResult::kOk;
}

}  // namespace cilkprof::unwinder
