// Logical unwinding: splices the stack segments of a cactus stack into the calling
// context the programmer wrote.
//
// A sample interrupts a strand running on some stack segment (a fiber, or the native
// stack of the thread that entered the runtime; cilkprof/runtime_abi.h). The logical
// path is: the strand's own frames up to its segment's entry trampoline; then the
// function that spawned the segment, at its spawn site (from the segment's saved spawn
// registers), and that function's callers up to *its* segment's entry; and so on up
// the parent chain; on the root segment the walk continues physically up to main and
// beyond, as a physical profile would. The innermost frame of each spawned segment
// (the child function directly above the trampoline) carries Edge::kSpawn.
//
// Elided code: frames whose pc lies in one of `elided` ranges (the runtime's code, the
// agent's own) are never recorded, wherever they appear. A sample taken while the
// runtime works on behalf of a strand (spawn, sync) thus lands on the user's spawn or
// sync site.
//
// Which segment a walk starts in: the innermost segment of `segment`'s parent chain
// whose stack holds the interrupted sp (during a context switch the runtime's
// published segment may name a stack the thread has not reached yet or has already
// left). When no segment of the chain holds sp:
//   - `segment` is null (a thread outside the runtime, or a program without one):
//     an ordinary physical walk, with elision;
//   - otherwise, in overhead mode, the walk starts at `segment`'s spawn point (the
//     scheduling work belongs to the spawn that created the stack being entered), or,
//     for a root segment, records nothing and sets `unattributed`;
//   - outside overhead mode the walk is physical and marked partial.
// A walk that reaches the bottom of a child segment (the end of its frame chain)
// without crossing its entry trampoline is inside the runtime's bottom-of-fiber code
// (starting or ending a child, partly inlined into the user's module): that segment's
// frames are dropped and the walk goes on at its spawn point. A walk that stops early
// in a child segment for another reason (a bad frame, sp leaving the stack) is partial,
// except in overhead mode, where it is treated the same way. An overhead walk that
// fails in the segment it started in (runtime assembly mid-switch) is redone from that
// segment's spawn point (or is unattributed at a root). A complete overhead walk that
// recorded no frame (all elided: a scheduler fiber between strands) is unattributed.
//
// Recorded creation contexts (OpenMP tasks, issue 17; docs/UNWINDER.md "Recorded
// paths"). A runtime without fibers (libomp) runs a task on whatever thread's stack,
// above the runtime's own frames: the task's creation context is not on the stack, so
// the runtime adapter records it at creation (a RecordedPath chain). With `boundary`
// ranges (the runtime's code) the walk is bounded by the running task: it stops at the
// first boundary frame that comes after a kept frame (the runtime frame that invoked
// the task). With `recorded` set as well, the outermost kept frame (the task's entry)
// gets Edge::kTask and the recorded chain is appended: each element's frames, and the
// outermost frame of an element that has a parent gets Edge::kTask too (the child-side
// frame carries the edge, as for spawned segments). A bounded walk with `recorded` that
// reaches the stack's end drops the frames below the last boundary frame it crossed
// (the runtime thread's start-up: start_thread, clone): a sample taken in the
// runtime's scheduling loop lands on the running task's creation context.
// `callees` (the C library's and the dynamic loader's code) are code the runtime calls
// on its own behalf: frames in them that the walk kept before its first boundary frame,
// with no other kept frame among them (libomp spinning in sched_yield for a lock,
// reading its thread id through __tls_get_addr), are the runtime's work, not the task's:
// they are dropped at that boundary frame and the walk goes on as if they had been
// elided, out to the user's call into the runtime. So are the tool's own callees while
// the runtime calls the tool back: kept frames with an elided frame that is no boundary
// frame (the tool's code) between them and the boundary frame.
//
// Signal safety: async-signal-safe, under the fault guard (a corrupt stack or segment
// yields a partial path). Same frame conventions as Unwind() (unwinder.h).
#pragma once

#include <stdint.h>
#include <ucontext.h>

#include "cilkprof/runtime_abi.h"
#include "cilkprof/unwinder/unwinder.h"

namespace cilkprof::unwinder {

struct CodeRange {
  uintptr_t lo = 0;
  uintptr_t hi = 0;  // exclusive
  bool Contains(uintptr_t pc) const { return pc >= lo && pc < hi; }
};

// One element of a recorded creation context: the frames of the code that created a
// task (the creation site, then its callers out to the creating task's own boundary),
// innermost first, with the Frame::pc convention (return addresses minus one); then
// the creating task's own context. Immutable while any walk may read it (the adapter
// keeps it alive while the task that runs on the sampled thread holds it).
struct RecordedPath {
  const RecordedPath* parent = nullptr;
  const uintptr_t* pcs = nullptr;
  uint32_t depth = 0;
  // The capture stopped early (a bad frame, or its frame bound): what lies beyond this
  // element is unknown, and a walk that appends it is partial and appends no further.
  bool partial = false;
};

struct LogicalRequest {
  Mode mode = Mode::kDwarf;
  const ucontext_t* context = nullptr;
  // Instead of `context` (which may then be null): the walk starts at a calling frame,
  // given as the registers it has when its call returns (pc the return address; see
  // CallerOfFrameRecord below), as a spawn point is. For captures that start where the
  // program called into a runtime (an OpenMP task's creation, from OMPT's enter_frame
  // and codeptr_ra): the runtime's frames and the tool's own are never stepped.
  const cilkprof_saved_regs_t* start = nullptr;
  // The running strand's innermost segment (cilkprof_worker_t::segment), or null.
  const cilkprof_segment_t* segment = nullptr;
  // The sample was taken in the OVERHEAD state: attribute it to the spawn or sync
  // site that caused the scheduling work (see above).
  bool overhead = false;
  const CodeRange* elided = nullptr;
  uint32_t elided_count = 0;
  // Frame-pointer mode: look for a frameless leaf at frame 0 (see cursor.h). Off for
  // contexts captured with getcontext() (a synchronous probe), whose frame 0 is the
  // capturing function itself, never a frameless leaf.
  bool probe_frameless_leaf = true;
  // Frame-pointer mode may step frameless frames with DWARF CFI (libunwind). False where
  // libunwind's FDE lookup is unsafe (inside dlclose, docs/UNWINDER.md): the walk then
  // trusts every plausible record, as an unchecked rbp walk does.
  bool allow_cfi = true;
  // Deep stacks (docs/UNWINDER.md "Deep stacks"). With keep_outermost = K > 0, a walk
  // that fills the first max_frames - K slots goes on without storing its frames,
  // keeping only the last K it saw (a ring in the remaining slots), until the stack
  // ends or max_walk frames have been walked in all: the sample keeps its innermost
  // and its outermost frames, with the middle elided (LogicalResult::elided). 0: the
  // walk stops at max_frames, as a plain truncation. Ignored unless K < max_frames;
  // max_walk below max_frames counts as max_frames.
  uint32_t keep_outermost = 0;
  uint32_t max_walk = 0;
  // Recorded creation contexts (above). Used without segments only: `segment` must be
  // null when boundary_count > 0.
  const RecordedPath* recorded = nullptr;
  const CodeRange* boundary = nullptr;
  uint32_t boundary_count = 0;
  const CodeRange* callees = nullptr;
  uint32_t callee_count = 0;
};

struct LogicalResult {
  uint32_t depth = 0;
  bool partial = false;       // the walk stopped early (fault, bad frame, lost segment)
  bool truncated = false;     // the walk's bound was reached (max_frames, or max_walk)
  // Deep stacks: `elided` frames were walked but not kept. They sat between frames[gap
  // - 1] (the outermost innermost-kept frame) and frames[gap] (the innermost of the
  // outermost kept ones, when gap < depth). A truncated deep walk has gap == depth:
  // only its innermost frames are kept, and the elided count is a lower bound.
  uint32_t elided = 0;
  uint32_t gap = 0;           // meaningful when elided > 0
  uint32_t walked = 0;        // frames the walk recorded in all (kept + elided)
  bool unattributed = false;  // overhead with no logical context (scheduler code only)
  uint32_t segments = 0;      // segments spliced (0: no segment involved)
  uint32_t recorded = 0;      // recorded path elements appended
};

// Bound on the parent chain followed (a corrupt chain cannot loop forever).
inline constexpr uint32_t kMaxSegmentChain = 1u << 16;

LogicalResult UnwindLogical(const LogicalRequest& request, Frame* frames, uint32_t max_frames);

// The caller of a function that has a frame record at `frame` (x86-64: the caller's rbp
// at [frame], the return address at [frame + 8]; what __builtin_frame_address(0) gives
// in a function that asks for it, as libomp's entry points do for OMPT's enter_frame):
// the registers a LogicalRequest::start needs (pc = the return address, sp just above
// it, fp = the saved rbp; the other callee-saved registers unknown, zero). False, and
// nothing read, unless `frame` is aligned and lies in [sp_floor, sp_floor + 1 MiB) (a
// frame of the calling thread's stack above `sp_floor`, the caller's own sp); false
// also when the record's return address is not `return_address` (the frame is not the
// runtime entry that `return_address` returns from) or cannot be read (under the fault
// guard). Async-signal-safe.
bool CallerOfFrameRecord(uintptr_t frame, uintptr_t return_address, uintptr_t sp_floor,
                         cilkprof_saved_regs_t* regs);

}  // namespace cilkprof::unwinder
