// Frame-pointer cursor: follows the rbp chain, validating every link before reading it.
#include <sys/ucontext.h>

#include "cilkprof/unwinder/cursor.h"

namespace cilkprof::unwinder {
namespace {

// A frame record sits at most this far above its frame's sp when the thread's stack
// bounds do not apply (fibers). Real frames are far smaller; garbage is usually not.
constexpr uintptr_t kMaxFrameSpan = uintptr_t{8} << 20;

// Frameless code (libc's start-up, for one) keeps small integers in rbp. A "next fp"
// below this is not a frame record but the end of the chain of framed code.
constexpr uintptr_t kLowestFrameAddress = uintptr_t{64} << 10;

// Whether [fp, fp + 16) can be the frame record of a frame whose sp is `sp`: above
// the chain's end marker, aligned, at or above sp, and inside the thread's stack when
// the frame is on it (fibers are bounded only by a sane frame size).
bool ValidRecord(uintptr_t fp, uintptr_t sp) {
  if (fp < kLowestFrameAddress || (fp & 7) != 0 || fp < sp) return false;
  const StackBounds stack = CurrentThreadStack();
  if (stack.Contains(sp)) return fp <= stack.hi - 16;
  return fp - sp <= kMaxFrameSpan;
}

}  // namespace

bool FramePointerCursor::InitFromContext(const ucontext_t* context) {
  if (context == nullptr) return false;
  const greg_t* g = context->uc_mcontext.gregs;
  pc_ = static_cast<uintptr_t>(g[REG_RIP]);
  sp_ = static_cast<uintptr_t>(g[REG_RSP]);
  fp_ = static_cast<uintptr_t>(g[REG_RBP]);
  leaf_return_address_ = 0;
  pushed_ = next_caller_ = 0;
  pc_is_return_address_ = false;
  return true;
}

void FramePointerCursor::ProbeFramelessLeaf() {
  if (pc_is_return_address_ || (sp_ & 7) != 0 || sp_ < kLowestFrameAddress) return;
  const uintptr_t candidate = *reinterpret_cast<const volatile uintptr_t*>(sp_);
  if (candidate < kLowestFrameAddress + 5) return;
  const auto* call = reinterpret_cast<const volatile uint8_t*>(candidate - 5);
  if (call[0] != 0xe8) return;  // call rel32
  uint32_t rel = 0;
  for (int i = 0; i < 4; ++i) rel |= static_cast<uint32_t>(call[1 + i]) << (8 * i);
  const uintptr_t target = candidate + static_cast<uintptr_t>(static_cast<int64_t>(static_cast<int32_t>(rel)));
  if (pc_ < target || pc_ - target >= kMaxLeafBytes) return;
  leaf_return_address_ = candidate;
}

bool FramePointerCursor::InitFromSavedRegs(const cilkprof_saved_regs_t& regs) {
  pc_ = regs.pc;
  sp_ = regs.sp;
  fp_ = regs.fp;
  leaf_return_address_ = 0;
  pushed_ = next_caller_ = 0;
  pc_is_return_address_ = true;
  return true;
}

bool FramePointerCursor::PeekCaller(uintptr_t* return_address) const {
  return PeekCallerOf(fp_, sp_, return_address);
}

bool FramePointerCursor::PeekCallerOf(uintptr_t fp, uintptr_t sp, uintptr_t* return_address) {
  if (!ValidRecord(fp, sp)) return false;
  *return_address = reinterpret_cast<const volatile uintptr_t*>(fp)[1];
  return *return_address != 0;
}

StepResult FramePointerCursor::Step() {
  if (next_caller_ < pushed_) {
    const Regs& caller = callers_[next_caller_++];
    pc_ = caller.pc;
    sp_ = caller.sp;
    fp_ = caller.fp;
    pc_is_return_address_ = true;
    return StepResult::kOk;
  }
  if (leaf_return_address_ != 0) {
    // A frameless frame: its caller's return address is at [sp] and rbp still holds
    // the caller's frame pointer.
    pc_ = leaf_return_address_;
    sp_ += 8;
    leaf_return_address_ = 0;
    pc_is_return_address_ = true;
    return StepResult::kOk;
  }
  const uintptr_t fp = fp_;
  if (fp < kLowestFrameAddress) return StepResult::kEnd;
  if (!ValidRecord(fp, sp_)) return StepResult::kBadFrame;
  const auto* record = reinterpret_cast<const volatile uintptr_t*>(fp);
  const uintptr_t next_fp = record[0];
  const uintptr_t return_address = record[1];
  if (return_address == 0) return StepResult::kEnd;
  // next_fp is validated by the next Step(): it must lie at or above the caller's sp,
  // fp + 16, so records strictly increase and a loop cannot go on.
  pc_ = return_address;
  sp_ = fp + 16;
  fp_ = next_fp;
  pc_is_return_address_ = true;
  return StepResult::kOk;
}

}  // namespace cilkprof::unwinder
