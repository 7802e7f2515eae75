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
  // of its own (a leaf GCC built without one even under -fno-omit-frame-pointer, or a
  // prologue or epilogue), whose caller the rbp chain would skip. Such a frame's return
  // address is at [sp]; it is accepted only if the 5 bytes before it are a direct call
  // whose target lies at or before pc and within kMaxLeafBytes of it. May fault on a
  // garbage sp: run it under its own RunGuarded so that a fault only skips the probe.
  void ProbeFramelessLeaf();
  static constexpr uintptr_t kMaxLeafBytes = uintptr_t{64} << 10;

  // Right after InitFromContext, when the interrupted frame and maybe some of its
  // callers are frameless (found by another unwinder): the next Step()s go to these
  // caller frames, in the order pushed, before following rbp again from the last one.
  // `pc` is a return address. At most kMaxPushedCallers; more are ignored.
  static constexpr int kMaxPushedCallers = 16;
  void PushCaller(uintptr_t pc, uintptr_t sp, uintptr_t fp) {
    if (pushed_ == kMaxPushedCallers) return;
    callers_[pushed_] = {pc, sp, fp};
    ++pushed_;
  }
  // The caller the rbp chain gives for the current frame, without moving: false when
  // the record fails the checks Step() makes. May fault: guarded callers only.
  bool PeekCaller(uintptr_t* return_address) const;
  // The same for a frame given by its fp and sp.
  static bool PeekCallerOf(uintptr_t fp, uintptr_t sp, uintptr_t* return_address);
  bool has_caller_override() const { return leaf_return_address_ != 0 || pushed_ != 0; }

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
  struct Regs {
    uintptr_t pc, sp, fp;
  };
  Regs callers_[kMaxPushedCallers];  // set by PushCaller, consumed by Step
  int pushed_ = 0, next_caller_ = 0;
  bool pc_is_return_address_ = false;
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
