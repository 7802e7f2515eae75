// Physical unwind cursors: one frame at a time, in either mode.
//
// A cursor starts either from an interrupted context (the ucontext of an SA_SIGINFO
// handler: frame 0 is the interrupted pc itself) or from a spawn point's saved
// registers (cilkprof_saved_regs_t: frame 0 is the spawning function, its pc a return
// address). Step() moves to the caller. Unwind() (unwinder.h) is a loop over a cursor;
// the logical unwinder of issue 4 drives cursors itself: step until the pc enters a
// segment's entry trampoline or sp leaves the segment's stack, then start a new cursor
// from the segment's saved spawn registers.
//
// Safety: Init*() and Step() read the stack being unwound and may fault on corrupt
// frames. Call them only inside RunGuarded() (fault_guard.h). They are async-signal-
// safe otherwise (no allocation, no locks; see docs/UNWINDER.md for libunwind's part).
// Cursors must not be copied or moved after Init*(): libunwind keeps pointers into
// the cursor and into the context it started from, so the ucontext passed to
// DwarfCursor::InitFromContext must outlive the cursor.
#pragma once

#include <stdint.h>
#include <ucontext.h>

#include "cilkprof/runtime_abi.h"

namespace cilkprof::unwinder {

enum class StepResult : uint8_t {
  kOk,        // moved to the caller frame
  kEnd,       // there is no caller: the outermost frame was reached
  kBadFrame,  // the caller cannot be found (no unwind info, corrupt or looping chain)
};

class DwarfCursor {
 public:
  DwarfCursor() = default;
  DwarfCursor(const DwarfCursor&) = delete;
  DwarfCursor& operator=(const DwarfCursor&) = delete;

  // Frame 0 is the interrupted frame of a signal (libunwind's UNW_INIT_SIGNAL_FRAME).
  bool InitFromContext(const ucontext_t* context);
  // Frame 0 is the function that owns the saved registers, at its return address.
  bool InitFromSavedRegs(const cilkprof_saved_regs_t& regs);

  StepResult Step();

  uintptr_t pc() const { return pc_; }
  uintptr_t sp() const { return sp_; }
  // The frame's rbp as the CFI restores it (for handing over to a frame-pointer walk).
  uintptr_t fp() const { return fp_; }
  // True when pc() is a return address (the frame is calling), so that the call
  // instruction is at pc() - 1; false for an interrupted frame.
  bool pc_is_return_address() const { return pc_is_return_address_; }

 private:
  bool LoadRegisters();

  // Opaque storage for libunwind's unw_cursor_t (size checked in the .cc), so that
  // this header does not pull libunwind.h and its UNW_LOCAL_ONLY mode into users.
  static constexpr unsigned kCursorWords = 127;
  alignas(16) uintptr_t cursor_[kCursorWords];
  // The registers InitFromSavedRegs starts from; libunwind reads them from here.
  ucontext_t saved_context_;
  uintptr_t pc_ = 0;
  uintptr_t sp_ = 0;
  uintptr_t fp_ = 0;
  bool pc_is_return_address_ = false;
};

// Follows rbp chains: [fp] = caller's fp, [fp + 8] = return address. Valid only for
// code built with -fno-omit-frame-pointer; elsewhere the chain ends early (kEnd when
// the next fp is null or a small integer, kBadFrame when it is a plausible address
// that fails validation).
class FramePointerCursor {
 public:
  FramePointerCursor() = default;
  FramePointerCursor(const FramePointerCursor&) = delete;
  FramePointerCursor& operator=(const FramePointerCursor&) = delete;

  bool InitFromContext(const ucontext_t* context);
  bool InitFromSavedRegs(const cilkprof_saved_regs_t& regs);

  // Right after InitFromContext: detects an interrupted frame that has no frame record
  // of its own (a leaf GCC built without one even under -fno-omit-frame-pointer, a
  // frameless library leaf such as memcpy, or a prologue or epilogue), whose caller the
  // rbp chain would skip. Such a frame's return address is at [sp]; it is accepted only
  // if the instruction before it is a direct call (possibly through a PLT stub or a GOT
  // slot) whose target lies at or before pc and less than 64 KiB from it. May fault on
  // a garbage sp: run it under its own RunGuarded so that a fault only skips the probe.
  void ProbeFramelessLeaf();
  // The probe found the interrupted frame's caller: the next Step() goes there.
  bool has_leaf_caller() const { return leaf_return_address_ != 0; }

  // The frame record at `fp` of a frame whose sp is `sp`: false when it fails the
  // checks Step() makes (below the chain's end marker, misaligned, below sp, outside
  // the thread's stack or too far above sp on a fiber). May fault: guarded callers only.
  static bool ReadRecord(uintptr_t fp, uintptr_t sp, uintptr_t* next_fp, uintptr_t* return_address);
  // A next fp below this is not a frame record but the end of the chain of framed code
  // (frameless start-up code keeps small integers in rbp).
  static constexpr uintptr_t kLowestFrameAddress = uintptr_t{64} << 10;
  // Moves to the caller named by the current frame's record, already read (ReadRecord)
  // and checked by the caller of this function: what Step() does after reading it.
  void MoveToCaller(uintptr_t next_fp, uintptr_t return_address);

  StepResult Step();

  uintptr_t pc() const { return pc_; }
  uintptr_t sp() const { return sp_; }
  uintptr_t fp() const { return fp_; }
  bool pc_is_return_address() const { return pc_is_return_address_; }

 private:
  uintptr_t pc_ = 0;
  uintptr_t sp_ = 0;
  uintptr_t fp_ = 0;
  uintptr_t leaf_return_address_ = 0;  // set by ProbeFramelessLeaf, used by one Step
  bool pc_is_return_address_ = false;
};

// Frame-pointer mode as the walks use it: follows the rbp chain from every frame that
// owns the record rbp points at, and steps any other frame with its DWARF CFI.
//  - A frame owns the record when it passes FramePointerCursor's checks and the call
//    before the record's return address entered the function holding the frame's pc
//    (through a PLT stub or GOT slot too), or was indirect and so cannot be checked.
//    Frameless code (glibc, libm and libstdc++ as Debian builds them, hand-written
//    assembly) keeps anything in rbp: data, which would end the walk with a garbage
//    frame, or its caller's frame pointer, whose genuine record would silently drop the
//    frames in between.
//  - A null or small rbp (below kLowestFrameAddress) ends the chain only at a pc known
//    to be an end of framed code (main's caller, start_thread): the first walk to meet
//    such a pc checks with CFI that at most kMaxTailFrames frames, none of them owning
//    a record, follow it to the end of the stack; the pc is then remembered
//    process-wide (lock-free, kMaxChainEnds of them). Anywhere else a small rbp is data,
//    and the frame is stepped with CFI.
// Costs over FramePointerCursor: decoding the call before each return address (a few
// loads, two more for a PLT stub); libunwind only for frames that fail the check.
class VerifiedFramePointerCursor {
 public:
  VerifiedFramePointerCursor() = default;
  VerifiedFramePointerCursor(const VerifiedFramePointerCursor&) = delete;
  VerifiedFramePointerCursor& operator=(const VerifiedFramePointerCursor&) = delete;

  // `context` must outlive the cursor (it is frame 0's register set for CFI steps).
  bool InitFromContext(const ucontext_t* context);
  bool InitFromSavedRegs(const cilkprof_saved_regs_t& regs);
  // Never step with CFI (libunwind unsafe here): a frame that fails the record check
  // follows its record anyway, and a small rbp ends the chain. Kept across Init*().
  void DisallowCfi() { cfi_allowed_ = false; }
  // FramePointerCursor::ProbeFramelessLeaf, same rules.
  void ProbeFramelessLeaf() { rbp_.ProbeFramelessLeaf(); }

  StepResult Step();

  uintptr_t pc() const { return on_cfi_ ? cfi_.pc() : rbp_.pc(); }
  uintptr_t sp() const { return on_cfi_ ? cfi_.sp() : rbp_.sp(); }
  uintptr_t fp() const { return on_cfi_ ? cfi_.fp() : rbp_.fp(); }
  bool pc_is_return_address() const { return on_cfi_ ? cfi_.pc_is_return_address() : rbp_.pc_is_return_address(); }
  // Steps taken with CFI so far (tests, statistics).
  uint32_t cfi_steps() const { return cfi_steps_; }

  // main's caller is followed by two frames (__libc_start_main_impl, _start),
  // start_thread by one (clone3). More would let a frameless program's own frames pass
  // for start-up code: with 4, a frameless function called by a frameless main that
  // keeps a small integer in rbp (BOTS' sort_par: four frames from the stack's end)
  // ended every walk through it, and main was never recorded.
  static constexpr int kMaxTailFrames = 2;
  static constexpr int kMaxChainEnds = 32;

 private:
  enum class Verdict : uint8_t { kOwnRecord, kChainEnd, kFrameless };
  // The record a kOwnRecord verdict read, so that the step does not read it again.
  struct Record {
    uintptr_t next_fp = 0;
    uintptr_t return_address = 0;
  };
  // What `fp` says about the frame at (sp, recorded pc); fills *record for kOwnRecord.
  // `probe`: a small fp at a pc not
  // yet known as a chain end is probed with CFI from the current frame of the rbp
  // chain (only while on it: the probe uses cfi_).
  Verdict Check(uintptr_t recorded_pc, uintptr_t sp, uintptr_t fp, bool probe, Record* record);
  // Starts cfi_ at the rbp chain's current frame (frame 0 with all its registers).
  bool StartCfiAtCurrentFrame();

  FramePointerCursor rbp_;
  DwarfCursor cfi_;
  const ucontext_t* context_ = nullptr;  // frame 0's registers (InitFromContext)
  cilkprof_saved_regs_t start_regs_{};   // frame 0's registers (InitFromSavedRegs)
  bool at_first_frame_ = false;
  bool cfi_allowed_ = true;
  bool on_cfi_ = false;
  bool verdict_known_ = false;  // verdict_ was found for the current frame
  Verdict verdict_ = Verdict::kFrameless;
  Record record_;  // with verdict_ == kOwnRecord
  uint32_t cfi_steps_ = 0;
};

// The pc to record for a cursor's current frame (see unwinder.h): the call
// instruction for calling frames, the exact pc for interrupted ones.
template <class Cursor>
inline uintptr_t RecordedPc(const Cursor& cursor) {
  return cursor.pc_is_return_address() ? cursor.pc() - 1 : cursor.pc();
}

// The calling thread's stack as PrepareThread() recorded it ([0, 0) before). Fibers
// run on other stacks, so this bounds a frame only when its sp lies inside.
struct StackBounds {
  uintptr_t lo = 0;
  uintptr_t hi = 0;
  bool Contains(uintptr_t address) const { return address >= lo && address < hi; }
};
StackBounds CurrentThreadStack();

}  // namespace cilkprof::unwinder
