// UnwindLogical(): physical cursors spliced across the segments of a cactus stack.
// The contract is in cilkprof/unwinder/logical.h; the design in docs/UNWINDER.md.
#include <algorithm>
#include <atomic>

#include "call_site.h"
#include "cilkprof/unwinder/cursor.h"
#include "cilkprof/unwinder/fault_guard.h"
#include "cilkprof/unwinder/logical.h"

namespace cilkprof::unwinder {
namespace {

// Lives in UnwindLogical()'s frame, outside the guarded functions, so that what was
// recorded survives the jump back from a fault.
struct WalkState {
  const LogicalRequest* request;
  Frame* frames;
  uint32_t max_frames;
  // Deep stacks (logical.h): frames [0, inner) are stored in order; frame i >= inner
  // goes to ring slot inner + (i - inner) % ring. Without a ring, inner = max_frames.
  uint32_t inner;
  uint32_t ring;
  uint32_t walk_limit;        // frames walked at most (depth never exceeds it)
  volatile uint32_t depth;    // frames walked and recorded so far (may exceed max_frames)
  volatile bool partial;
  volatile bool truncated;
  volatile bool unattributed;
  volatile uint32_t segments;
  // The segment holding the interrupted sp, while the walk is still in it (null once
  // it has spliced out, or when the walk did not start in a segment).
  const cilkprof_segment_t* volatile first_segment;
  // Second pass of an overhead sample (see UnwindLogical): start at this segment's
  // spawn point instead of the signal context.
  const cilkprof_segment_t* start_at_spawn;
  // Bounded walks (recorded paths, logical.h): the depth when the walk last crossed a
  // boundary frame, if it did.
  volatile bool boundary_seen;
  volatile uint32_t boundary_depth;
  volatile uint32_t recorded;
  // Every frame kept so far lies in the request's callee ranges (logical.h).
  volatile bool only_callees;
};

WalkState NewWalkState(const LogicalRequest* request, Frame* frames, uint32_t max_frames) {
  WalkState state{request, frames, max_frames, max_frames, 0, max_frames, 0, false, false, false, 0, nullptr, nullptr,
                  false, 0, 0, true};
  const uint32_t keep = request->keep_outermost;
  if (keep > 0 && keep < max_frames) {
    state.inner = max_frames - keep;
    state.ring = keep;
    state.walk_limit = request->max_walk > max_frames ? request->max_walk : max_frames;
  }
  return state;
}

// Where frame i of the walk is stored.
uint32_t Slot(const WalkState* state, uint32_t i) {
  return i < state->inner ? i : state->inner + (i - state->inner) % state->ring;
}

// Same discipline as Record() in unwind.cc: the frame is in memory before depth
// counts it, and both before the next (possibly faulting) read of the stack.
void Record(WalkState* state, uintptr_t pc) {
  const uint32_t depth = state->depth;
  const uint32_t slot = Slot(state, depth);
  state->frames[slot].pc = pc;
  state->frames[slot].edge = Edge::kCall;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  state->depth = depth + 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

bool InRanges(const CodeRange* ranges, uint32_t count, uintptr_t pc) {
  for (uint32_t i = 0; i < count; ++i) {
    if (ranges[i].Contains(pc)) return true;
  }
  return false;
}

bool Elided(const LogicalRequest& request, uintptr_t pc) { return InRanges(request.elided, request.elided_count, pc); }

// A segment's fields, read once (they may fault: guarded callers only).
struct SegmentView {
  const cilkprof_segment_t* self = nullptr;
  const cilkprof_segment_t* parent = nullptr;
  uintptr_t stack_lo = 0, stack_hi = 0, entry_lo = 0, entry_hi = 0;
  bool child() const { return self != nullptr && parent != nullptr; }
};

SegmentView Read(const cilkprof_segment_t* segment) {
  SegmentView v;
  if (segment == nullptr) return v;
  v.self = segment;
  v.parent = segment->parent;
  v.stack_lo = segment->stack_lo;
  v.stack_hi = segment->stack_hi;
  v.entry_lo = segment->entry_lo;
  v.entry_hi = segment->entry_hi;
  return v;
}

// The innermost segment of the chain whose stack holds sp, or null.
const cilkprof_segment_t* SegmentHolding(const cilkprof_segment_t* head, uintptr_t sp) {
  uint32_t steps = 0;
  for (const cilkprof_segment_t* s = head; s != nullptr && steps < kMaxSegmentChain;
       s = s->parent, ++steps) {
    if (sp >= s->stack_lo && sp < s->stack_hi) return s;
  }
  return nullptr;
}

void DropFramesAfter(WalkState* state, uint32_t keep);

enum class SegmentEnd : uint8_t { kEntry, kLeftStack, kEnd, kBadFrame, kTruncated, kBoundary };

// Records the frames of one segment, from the cursor's current frame outward, until
// the segment's entry trampoline (child segments), the stack's edge, the end of the
// chain, a bad frame, or max_frames.
template <class Cursor>
SegmentEnd WalkSegment(Cursor& cursor, const SegmentView& segment, WalkState* state) {
  bool user_frame_seen = false;
  bool after_elided = false;
  // An elided frame that is no boundary frame (the tool's own code) was walked since
  // the last kept frame: what the walk kept so far are the tool's callees.
  bool tool_since_kept = false;
  for (;;) {
    const uintptr_t pc = RecordedPc(cursor);
    const bool elided = Elided(*state->request, pc);
    if (!elided && after_elided && cursor.pc_is_return_address() && !internal::FollowsCall(cursor.pc())) {
      return SegmentEnd::kBadFrame;
    }
    after_elided = elided;
    if (state->request->boundary_count > 0 &&
        InRanges(state->request->boundary, state->request->boundary_count, pc)) {
      // The runtime frame that invoked the task being walked (bounded walks only run
      // without segments: frames from 0 are the task's), unless all the walk kept so
      // far is code the runtime called for itself (logical.h, `callees`) or the tool's
      // callees while the runtime called the tool back (the task called the runtime).
      if (state->depth > 0 && !state->only_callees && !tool_since_kept) return SegmentEnd::kBoundary;
      if (state->depth > 0) DropFramesAfter(state, 0);
      state->boundary_seen = true;
      state->boundary_depth = state->depth;
      tool_since_kept = false;
    } else if (elided) {
      tool_since_kept = true;
    }
    if (segment.child()) {
      if (pc >= segment.entry_lo && pc < segment.entry_hi) return SegmentEnd::kEntry;
      const uintptr_t sp = cursor.sp();
      if (sp < segment.stack_lo || sp >= segment.stack_hi) return SegmentEnd::kLeftStack;
      // On a child fiber the runtime's code sits only above the user's frames (a
      // spawn or sync in progress) or below the trampoline (the fiber's start-up
      // loop). Runtime code under a user frame means the walk passed below the
      // trampoline without crossing it: it is in the fiber's bottom frames.
      if (elided && user_frame_seen) return SegmentEnd::kEnd;
      user_frame_seen = user_frame_seen || !elided;
    }
    if (!elided) {
      if (state->depth == state->walk_limit) {
        state->truncated = true;
        return SegmentEnd::kTruncated;
      }
      if (state->only_callees && !InRanges(state->request->callees, state->request->callee_count, pc)) {
        state->only_callees = false;
      }
      Record(state, pc);
      tool_since_kept = false;
    }
    const StepResult step = cursor.Step();
    if (step == StepResult::kEnd) return SegmentEnd::kEnd;
    if (step == StepResult::kBadFrame) return SegmentEnd::kBadFrame;
  }
}

// A walk that gives up `depth - keep` of its last frames (keep >= inner or not): on a
// deep stack the dropped frames may have overwritten ring slots of frames before them:
// those are gone, and the path is partial.
void DropFramesAfter(WalkState* state, uint32_t keep) {
  if (state->depth > keep && keep > state->inner) {
    const uint32_t oldest = keep - state->inner > state->ring ? keep - state->ring : state->inner;
    if (oldest + state->ring < state->depth) state->partial = true;
  }
  state->depth = keep;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

void MarkOutermost(WalkState* state, Edge edge) {
  if (state->depth == 0) return;
  state->frames[Slot(state, state->depth - 1)].edge = edge;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// The end of a bounded walk (logical.h, recorded paths): the running task's frames are
// recorded; its entry frame gets kTask and the recorded chain follows.
void AppendRecorded(WalkState* state, SegmentEnd end) {
  const LogicalRequest& request = *state->request;
  if (request.recorded == nullptr) return;
  if (end == SegmentEnd::kEnd && state->boundary_seen) DropFramesAfter(state, state->boundary_depth);
  MarkOutermost(state, Edge::kTask);
  uint32_t steps = 0;
  for (const RecordedPath* path = request.recorded; path != nullptr; path = path->parent) {
    if (++steps > kMaxSegmentChain) {
      state->partial = true;
      return;
    }
    state->recorded = steps;
    const uintptr_t* pcs = path->pcs;
    const uint32_t depth = path->depth;
    for (uint32_t i = 0; i < depth; ++i) {
      if (state->depth == state->walk_limit) {
        state->truncated = true;
        return;
      }
      Record(state, pcs[i]);
    }
    if (path->partial) {
      state->partial = true;
      return;
    }
    if (path->parent != nullptr) MarkOutermost(state, Edge::kTask);
  }
}

// The whole logical walk. The cursor is already initialized from the signal context.
template <class Cursor>
void WalkLogical(Cursor& cursor, WalkState* state) {
  const LogicalRequest& request = *state->request;
  SegmentView segment;
  if (state->start_at_spawn != nullptr) {
    state->segments = state->segments + 1;
    if (!cursor.InitFromSavedRegs(state->start_at_spawn->spawn)) {
      state->partial = true;
      return;
    }
    segment = Read(state->start_at_spawn->parent);
  } else if (request.segment != nullptr) {
    const cilkprof_segment_t* holding = SegmentHolding(request.segment, cursor.sp());
    if (holding != nullptr) {
      segment = Read(holding);
      state->first_segment = holding;
    } else if (!request.overhead) {
      state->partial = true;  // a strand's sp outside its own stacks: trust nothing
      segment = SegmentView{};
    } else {
      // A context switch or the scheduler's own stack: the scheduling work belongs to
      // the spawn that created the stack being entered (or to nobody, at the root).
      const SegmentView published = Read(request.segment);
      if (!published.child()) {
        state->unattributed = true;
        return;
      }
      state->segments = state->segments + 1;
      if (!cursor.InitFromSavedRegs(request.segment->spawn)) {
        state->partial = true;
        return;
      }
      segment = Read(published.parent);
    }
  }
  for (;;) {
    const uint32_t segment_start = state->depth;
    const SegmentEnd end = WalkSegment(cursor, segment, state);
    if (end == SegmentEnd::kTruncated) return;
    if (!segment.child()) {
      // The root segment, or no runtime: a physical walk to the outermost frame (or,
      // bounded, to the running task's boundary).
      if (end != SegmentEnd::kEnd && end != SegmentEnd::kBoundary) {
        state->partial = true;
        return;
      }
      AppendRecorded(state, end);
      return;
    }
    if (end == SegmentEnd::kEntry) {
      if (state->depth > segment_start) {
        state->frames[Slot(state, state->depth - 1)].edge = Edge::kSpawn;
        std::atomic_signal_fence(std::memory_order_seq_cst);
      }
    } else if (request.overhead || end == SegmentEnd::kEnd) {
      // The bottom of a child fiber below its trampoline (the chain ended cleanly
      // without crossing it): the runtime starting or ending the child, in code the
      // runtime inlines into the user's module (fiber_main). Those frames are the
      // runtime's and the child has no frame of its own yet (or any more): the sample
      // belongs to the spawn. Overhead samples get the same treatment after any stop.
      DropFramesAfter(state, segment_start);
    } else {
      state->partial = true;
      return;
    }
    if (state->segments >= kMaxSegmentChain) {
      state->partial = true;
      return;
    }
    state->segments = state->segments + 1;
    state->first_segment = nullptr;
    if (!cursor.InitFromSavedRegs(segment.self->spawn)) {
      state->partial = true;
      return;
    }
    segment = Read(segment.parent);
  }
}

// Frame 0 of a walk that does not start at a spawn point: the request's start frame
// or its signal context.
template <class Cursor>
bool InitAtStart(Cursor& cursor, const LogicalRequest& request) {
  return request.start != nullptr ? cursor.InitFromSavedRegs(*request.start) : cursor.InitFromContext(request.context);
}

void GuardedDwarfWalk(void* arg) {
  auto* state = static_cast<WalkState*>(arg);
  DwarfCursor cursor;
  if (state->start_at_spawn == nullptr && !InitAtStart(cursor, *state->request)) {
    state->partial = true;
    return;
  }
  WalkLogical(cursor, state);
}

struct FramePointerWalk {
  VerifiedFramePointerCursor cursor;
  WalkState* state;
};

void GuardedLeafProbe(void* arg) { static_cast<FramePointerWalk*>(arg)->cursor.ProbeFramelessLeaf(); }

// Frame-pointer mode. Frames without a record of their own (frameless libraries, the
// runtime's assembly and prologues) are stepped with their CFI by the cursor itself.
void GuardedFramePointerWalk(void* arg) {
  auto* walk = static_cast<FramePointerWalk*>(arg);
  WalkLogical(walk->cursor, walk->state);
}

// Clears start_at_spawn when that segment is a root (no parent, no spawn point).
void ReadParentGuarded(void* arg) {
  auto* state = static_cast<WalkState*>(arg);
  if (state->start_at_spawn->parent == nullptr) state->start_at_spawn = nullptr;
}

GuardOutcome WalkFramePointers(WalkState* state) {
  FramePointerWalk walk;
  walk.state = state;
  // Reads only the ucontext itself (which the kernel wrote) or the start registers:
  // cannot fault.
  if (state->start_at_spawn == nullptr && !InitAtStart(walk.cursor, *state->request)) {
    state->partial = true;
    return GuardOutcome::kCompleted;
  }
  if (!state->request->allow_cfi) walk.cursor.DisallowCfi();
  // A start frame is a calling frame, never a frameless leaf.
  if (state->request->probe_frameless_leaf && state->start_at_spawn == nullptr && state->request->start == nullptr) {
    RunGuarded(GuardedLeafProbe, &walk);
  }
  return RunGuarded(GuardedFramePointerWalk, &walk);
}

// Lays out a deep walk's frames (logical.h): the innermost ones in place, then the
// outermost `ring` in order, rotated out of the ring. Plain memory: no guard needed.
void Finish(const WalkState& state, LogicalResult* result) {
  const uint32_t walked = state.depth;
  result->walked = walked;
  result->depth = walked;
  if (walked <= state.max_frames) return;  // everything fit: slots are in order
  result->gap = state.inner;
  if (state.truncated) {
    // The ring holds frames from the middle, not the outermost: keep the innermost.
    result->depth = state.inner;
    result->elided = walked - state.inner;
    return;
  }
  // Ring slot of the oldest kept frame (walked - ring) becomes slot `inner`.
  Frame* ring = state.frames + state.inner;
  std::rotate(ring, ring + (walked - state.ring - state.inner) % state.ring, ring + state.ring);
  result->depth = state.max_frames;
  result->elided = walked - state.max_frames;
}

}  // namespace

bool CallerOfFrameRecord(uintptr_t frame, uintptr_t return_address, uintptr_t sp_floor,
                         cilkprof_saved_regs_t* regs) {
  constexpr uintptr_t kMaxDistance = uintptr_t{1} << 20;
  if (return_address == 0 || frame % sizeof(uintptr_t) != 0 || frame < sp_floor || frame - sp_floor >= kMaxDistance) {
    return false;
  }
  struct Read {
    uintptr_t frame;
    uintptr_t record[2];
  } read{frame, {0, 0}};
  const GuardOutcome outcome = RunGuarded(
      [](void* arg) {
        auto* r = static_cast<Read*>(arg);
        const auto* record = reinterpret_cast<const uintptr_t*>(r->frame);
        r->record[0] = record[0];
        r->record[1] = record[1];
      },
      &read);
  if (outcome != GuardOutcome::kCompleted || read.record[1] != return_address) return false;
  *regs = cilkprof_saved_regs_t{};
  regs->pc = return_address;
  regs->sp = frame + 2 * sizeof(uintptr_t);
  regs->fp = read.record[0];
  return true;
}

LogicalResult UnwindLogical(const LogicalRequest& request, Frame* frames, uint32_t max_frames) {
  LogicalResult result;
  const bool has_start = request.context != nullptr || request.start != nullptr;
  if (!has_start || frames == nullptr || max_frames == 0) {
    result.partial = !has_start;
    result.truncated = has_start;
    return result;
  }
  WalkState state = NewWalkState(&request, frames, max_frames);
  GuardOutcome outcome = request.mode == Mode::kFramePointer ? WalkFramePointers(&state)
                                                             : RunGuarded(GuardedDwarfWalk, &state);
  if (request.mode == Mode::kFramePointer && request.allow_cfi && outcome == GuardOutcome::kFaulted) {
    // The frame-pointer walk read through a value that only looked like a frame record
    // (frameless code's data in rbp, whose "return address" was unmapped). The CFI walk
    // never follows rbp: redo the sample with it, at its cost, rather than lose the path.
    state = NewWalkState(&request, frames, max_frames);
    outcome = RunGuarded(GuardedDwarfWalk, &state);
  }
  if (request.overhead && !state.truncated &&
      (state.partial || outcome == GuardOutcome::kFaulted) && state.first_segment != nullptr) {
    // An overhead sample whose walk failed before leaving the segment it started in
    // failed inside the runtime (a context switch in progress: assembly whose unwind
    // information does not describe the half-switched stack). The scheduling work
    // belongs to that segment's strand: charge its spawn point, or nobody at the root.
    const cilkprof_segment_t* first = state.first_segment;
    state.depth = 0;
    state.partial = false;
    state.segments = 0;
    state.first_segment = nullptr;
    state.start_at_spawn = first;
    outcome = RunGuarded(ReadParentGuarded, &state);
    if (outcome == GuardOutcome::kCompleted && state.start_at_spawn == nullptr) {
      state.unattributed = true;  // the root segment: no spawn point to charge
    } else if (outcome == GuardOutcome::kCompleted) {
      outcome = request.mode == Mode::kFramePointer ? WalkFramePointers(&state)
                                                    : RunGuarded(GuardedDwarfWalk, &state);
    }
  }
  Finish(state, &result);
  result.partial = state.partial || outcome != GuardOutcome::kCompleted;
  result.truncated = state.truncated;
  result.unattributed = state.unattributed && outcome == GuardOutcome::kCompleted;
  if (request.overhead && result.depth == 0 && !result.partial && !result.truncated) {
    // A complete overhead walk whose every frame was elided ran in scheduler code with
    // no strand behind it (a scheduler fiber between strands): no logical context.
    result.unattributed = true;
  }
  result.segments = state.segments;
  result.recorded = state.recorded;
  return result;
}

}  // namespace cilkprof::unwinder
