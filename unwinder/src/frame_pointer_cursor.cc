// Frame-pointer cursor: follows the rbp chain, validating every link before reading it.
#include <sys/ucontext.h>

#include "call_site.h"
#include "cilkprof/unwinder/cursor.h"

namespace cilkprof::unwinder {
namespace {

// A frame record sits at most this far above its frame's sp when the thread's stack
// bounds do not apply (fibers). Real frames are far smaller; garbage is usually not.
constexpr uintptr_t kMaxFrameSpan = uintptr_t{8} << 20;

constexpr uintptr_t kLowestFrameAddress = FramePointerCursor::kLowestFrameAddress;

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
  pc_is_return_address_ = false;
  return true;
}

void FramePointerCursor::ProbeFramelessLeaf() {
  if (pc_is_return_address_ || (sp_ & 7) != 0 || sp_ < kLowestFrameAddress) return;
  const uintptr_t candidate = *reinterpret_cast<const volatile uintptr_t*>(sp_);
  if (internal::ClassifyCallBefore(candidate, pc_) == internal::CallBefore::kCallee) {
    leaf_return_address_ = candidate;
  }
}

bool FramePointerCursor::InitFromSavedRegs(const cilkprof_saved_regs_t& regs) {
  pc_ = regs.pc;
  sp_ = regs.sp;
  fp_ = regs.fp;
  leaf_return_address_ = 0;
  pc_is_return_address_ = true;
  return true;
}

bool FramePointerCursor::ReadRecord(uintptr_t fp, uintptr_t sp, uintptr_t* next_fp, uintptr_t* return_address) {
  if (!ValidRecord(fp, sp)) return false;
  const auto* record = reinterpret_cast<const volatile uintptr_t*>(fp);
  *next_fp = record[0];
  *return_address = record[1];
  return true;
}

StepResult FramePointerCursor::Step() {
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
  uintptr_t next_fp = 0;
  uintptr_t return_address = 0;
  if (!ReadRecord(fp, sp_, &next_fp, &return_address)) return StepResult::kBadFrame;
  if (return_address == 0) return StepResult::kEnd;
  MoveToCaller(next_fp, return_address);
  return StepResult::kOk;
}

void FramePointerCursor::MoveToCaller(uintptr_t next_fp, uintptr_t return_address) {
  // next_fp is validated by the next Step(): it must lie at or above the caller's sp,
  // fp + 16, so records strictly increase and a loop cannot go on.
  pc_ = return_address;
  sp_ = fp_ + 16;
  fp_ = next_fp;
  leaf_return_address_ = 0;
  pc_is_return_address_ = true;
}

}  // namespace cilkprof::unwinder
