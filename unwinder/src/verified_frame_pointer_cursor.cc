// Frame-pointer walk that checks every record and steps frameless frames with CFI.
// The contract is in cilkprof/unwinder/cursor.h; the design in docs/UNWINDER.md.
#include <atomic>

#include "call_site.h"
#include "cilkprof/unwinder/cursor.h"

namespace cilkprof::unwinder {
namespace {

// Pcs at which a small rbp ends the chain of framed code, found by CFI probes. Slots
// fill once, from 0 to a pc, and are never cleared: readers need no lock.
std::atomic<uintptr_t> g_chain_ends[VerifiedFramePointerCursor::kMaxChainEnds];

bool KnownChainEnd(uintptr_t pc) {
  for (auto& slot : g_chain_ends) {
    const uintptr_t end = slot.load(std::memory_order_relaxed);
    if (end == 0) return false;
    if (end == pc) return true;
  }
  return false;
}

void RememberChainEnd(uintptr_t pc) {
  for (auto& slot : g_chain_ends) {
    uintptr_t expected = 0;
    if (slot.compare_exchange_strong(expected, pc, std::memory_order_relaxed) || expected == pc) return;
  }
}

// Whether the record at fp belongs to the frame at (sp, recorded_pc): see cursor.h.
bool OwnsRecord(uintptr_t recorded_pc, uintptr_t sp, uintptr_t fp, uintptr_t* next_fp, uintptr_t* return_address) {
  if (!FramePointerCursor::ReadRecord(fp, sp, next_fp, return_address)) return false;
  const internal::CallBefore call = internal::ClassifyCallBefore(*return_address, recorded_pc);
  return call == internal::CallBefore::kCallee || call == internal::CallBefore::kIndirect;
}

}  // namespace

bool VerifiedFramePointerCursor::InitFromContext(const ucontext_t* context) {
  context_ = context;
  at_first_frame_ = true;
  on_cfi_ = verdict_known_ = false;
  cfi_steps_ = 0;
  return rbp_.InitFromContext(context);
}

bool VerifiedFramePointerCursor::InitFromSavedRegs(const cilkprof_saved_regs_t& regs) {
  context_ = nullptr;
  start_regs_ = regs;
  at_first_frame_ = true;
  on_cfi_ = verdict_known_ = false;
  cfi_steps_ = 0;
  return rbp_.InitFromSavedRegs(regs);
}

bool VerifiedFramePointerCursor::StartCfiAtCurrentFrame() {
  if (at_first_frame_) {
    return context_ != nullptr ? cfi_.InitFromContext(context_) : cfi_.InitFromSavedRegs(start_regs_);
  }
  // A caller frame of the rbp chain: only pc, sp and rbp are known, which is what the
  // CFI of code reached this way needs (a frameless frame's CFA is sp-based).
  cilkprof_saved_regs_t regs{};
  regs.pc = rbp_.pc();
  regs.sp = rbp_.sp();
  regs.fp = rbp_.fp();
  return cfi_.InitFromSavedRegs(regs);
}

VerifiedFramePointerCursor::Verdict VerifiedFramePointerCursor::Check(uintptr_t recorded_pc, uintptr_t sp,
                                                                       uintptr_t fp, bool probe,
                                                                       Record* record) {
  if (fp >= FramePointerCursor::kLowestFrameAddress) {
    return OwnsRecord(recorded_pc, sp, fp, &record->next_fp, &record->return_address) ? Verdict::kOwnRecord
                                                                                      : Verdict::kFrameless;
  }
  if (KnownChainEnd(recorded_pc)) return Verdict::kChainEnd;
  if (!probe || !StartCfiAtCurrentFrame()) return Verdict::kFrameless;
  for (int i = 0; i <= kMaxTailFrames; ++i) {
    const StepResult step = cfi_.Step();
    if (step == StepResult::kEnd) {
      RememberChainEnd(recorded_pc);
      return Verdict::kChainEnd;
    }
    if (step != StepResult::kOk) break;
    // Framed code further out: the small rbp was a frameless function's data.
    Record further_out;
    if (cfi_.pc_is_return_address() &&
        OwnsRecord(RecordedPc(cfi_), cfi_.sp(), cfi_.fp(), &further_out.next_fp, &further_out.return_address)) {
      break;
    }
  }
  return Verdict::kFrameless;
}

StepResult VerifiedFramePointerCursor::Step() {
  if (!on_cfi_) {
    if (rbp_.has_leaf_caller()) {  // the probe proved the frameless leaf's caller
      at_first_frame_ = false;
      return rbp_.Step();
    }
    if (!verdict_known_) verdict_ = Check(RecordedPc(rbp_), rbp_.sp(), rbp_.fp(), /*probe=*/cfi_allowed_, &record_);
    verdict_known_ = false;
    if (verdict_ == Verdict::kChainEnd) return StepResult::kEnd;
    if (verdict_ == Verdict::kOwnRecord) {
      rbp_.MoveToCaller(record_.next_fp, record_.return_address);
      at_first_frame_ = false;
      return StepResult::kOk;
    }
    if (!cfi_allowed_) {  // unchecked, as a plain rbp walk
      const StepResult step = rbp_.Step();
      if (step == StepResult::kOk) at_first_frame_ = false;
      return step;
    }
    if (!StartCfiAtCurrentFrame()) return StepResult::kBadFrame;
    on_cfi_ = true;
  }
  const StepResult step = cfi_.Step();
  if (step != StepResult::kOk) return step;
  at_first_frame_ = false;
  ++cfi_steps_;
  if (cfi_.pc_is_return_address()) {
    // Back on the rbp chain at the first frame that owns its record, or at a known end.
    const Verdict verdict = Check(RecordedPc(cfi_), cfi_.sp(), cfi_.fp(), /*probe=*/false, &record_);
    if (verdict != Verdict::kFrameless) {
      cilkprof_saved_regs_t regs{};
      regs.pc = cfi_.pc();
      regs.sp = cfi_.sp();
      regs.fp = cfi_.fp();
      rbp_.InitFromSavedRegs(regs);
      on_cfi_ = false;
      verdict_ = verdict;
      verdict_known_ = true;
    }
  }
  return StepResult::kOk;
}

}  // namespace cilkprof::unwinder
