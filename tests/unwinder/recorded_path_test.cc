// UnwindLogical() with recorded creation contexts (OpenMP tasks, issue 17): synthetic
// stacks where one function plays the runtime that invokes a task (the boundary, and
// elided), walked in both modes. The running task's frames stop at the boundary, its
// entry frame carries the task edge, the recorded chain follows with its own task
// edges, a walk from the runtime's scheduling loop lands on the chain alone, deep
// stacks keep the chain as their outermost frames, and corrupt chains stay bounded.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <ucontext.h>

#include <gtest/gtest.h>

#include "cilkprof/unwinder/logical.h"

#if defined(__clang__)
#define TEST_FN extern "C" __attribute__((noinline, optnone))
#else
#define TEST_FN extern "C" __attribute__((noinline, noipa))
#endif

namespace {

using cilkprof::unwinder::CodeRange;
using cilkprof::unwinder::Edge;
using cilkprof::unwinder::Frame;
using cilkprof::unwinder::LogicalRequest;
using cilkprof::unwinder::LogicalResult;
using cilkprof::unwinder::Mode;
using cilkprof::unwinder::RecordedPath;

constexpr uint32_t kMaxFrames = 64;

struct Walk {
  LogicalRequest request;
  CodeRange runtime;  // the boundary and the elided range
  Frame frames[kMaxFrames];
  uint32_t max_frames = kMaxFrames;
  LogicalResult result;
};
Walk g_walk;

}  // namespace

TEST_FN void task_leaf() {
  ucontext_t context;
  if (getcontext(&context) != 0) return;
  g_walk.request.context = &context;
  g_walk.result = cilkprof::unwinder::UnwindLogical(g_walk.request, g_walk.frames, g_walk.max_frames);
  g_walk.request.context = nullptr;
}

TEST_FN void task_recurse(uint32_t n) {
  if (n == 0) {
    task_leaf();
  } else {
    task_recurse(n - 1);
  }
  asm volatile("" ::: "memory");  // no tail call: every level keeps its frame
}

TEST_FN void task_entry(uint32_t levels) {
  task_recurse(levels);
  asm volatile("" ::: "memory");
}

// Plays the runtime: invokes the task. Its caller (the test) plays the runtime thread's
// own frames below, which a bounded walk must not reach.
TEST_FN void runtime_invoke(uint32_t levels) {
  task_entry(levels);
  asm volatile("" ::: "memory");
}

// A task that calls into the runtime (plays __kmpc_omp_task: boundary and elided),
// which calls the tool back (plays the agent: elided only), which calls a library of
// its own (task_leaf plays libunwind, called by the agent's capture: neither).
TEST_FN void tool_callback() {
  task_leaf();
  asm volatile("" ::: "memory");
}

TEST_FN void runtime_entry() {
  tool_callback();
  asm volatile("" ::: "memory");
}

TEST_FN void task_calling_the_runtime() {
  runtime_entry();
  asm volatile("" ::: "memory");
}

TEST_FN void runtime_invoke_caller() {
  task_calling_the_runtime();
  asm volatile("" ::: "memory");
}

// Plays the runtime's scheduling loop on a thread of its own: a sample taken here has no
// task frame; start_thread and clone below it are the thread's start-up.
TEST_FN void* runtime_thread(void*) {
  task_leaf();
  asm volatile("" ::: "memory");
  return nullptr;
}

namespace {

CodeRange RangeOf(const void* fn) {
  Dl_info info;
  ElfW(Sym)* symbol = nullptr;
  CodeRange range;
  if (dladdr1(fn, &info, reinterpret_cast<void**>(&symbol), RTLD_DL_SYMENT) != 0 && symbol != nullptr) {
    range.lo = reinterpret_cast<uintptr_t>(info.dli_saddr);
    range.hi = range.lo + symbol->st_size;
  }
  return range;
}

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* error = nullptr;
    ASSERT_TRUE(cilkprof::unwinder::Initialize(&error)) << error;
    cilkprof::unwinder::PrepareThread();
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

// The creation context of the task: two frames of its creator, whose own context is
// one frame of the initial task. The pcs are never symbolized, only copied.
const uintptr_t kCreatorPcs[] = {0x1001, 0x1002};
const uintptr_t kInitialPcs[] = {0x2001};
const RecordedPath kInitial{nullptr, kInitialPcs, 1, false};
const RecordedPath kCreator{&kInitial, kCreatorPcs, 2, false};

void Prepare(Mode mode, const RecordedPath* recorded) {
  g_walk = Walk{};
  g_walk.runtime = RangeOf(reinterpret_cast<const void*>(&runtime_invoke));
  static CodeRange ranges[2];
  ranges[0] = g_walk.runtime;
  ranges[1] = RangeOf(reinterpret_cast<const void*>(&runtime_thread));
  g_walk.request.mode = mode;
  g_walk.request.probe_frameless_leaf = false;  // a getcontext() context
  g_walk.request.elided = ranges;
  g_walk.request.elided_count = 2;
  g_walk.request.boundary = ranges;
  g_walk.request.boundary_count = 2;
  g_walk.request.recorded = recorded;
}

const char* Name(Mode mode) { return mode == Mode::kDwarf ? "dwarf" : "fp"; }

TEST(RecordedPath, TheTaskFramesStopAtTheBoundaryAndTheChainFollowsWithTaskEdges) {
  const CodeRange leaf = RangeOf(reinterpret_cast<const void*>(&task_leaf));
  const CodeRange recurse = RangeOf(reinterpret_cast<const void*>(&task_recurse));
  const CodeRange entry = RangeOf(reinterpret_cast<const void*>(&task_entry));
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, &kCreator);
    runtime_invoke(1);
    const LogicalResult& r = g_walk.result;
    EXPECT_FALSE(r.partial);
    EXPECT_FALSE(r.truncated);
    EXPECT_EQ(r.recorded, 2u);
    ASSERT_EQ(r.depth, 4u + 3u);
    EXPECT_TRUE(leaf.Contains(g_walk.frames[0].pc));
    EXPECT_TRUE(recurse.Contains(g_walk.frames[1].pc));
    EXPECT_TRUE(recurse.Contains(g_walk.frames[2].pc));
    EXPECT_EQ(g_walk.frames[2].edge, Edge::kCall);
    // The task's entry frame was entered as a task from the creation site.
    EXPECT_TRUE(entry.Contains(g_walk.frames[3].pc));
    EXPECT_EQ(g_walk.frames[3].edge, Edge::kTask);
    EXPECT_EQ(g_walk.frames[4].pc, 0x1001u);
    EXPECT_EQ(g_walk.frames[4].edge, Edge::kCall);
    // The creator's outermost frame (its own task entry) continues into its creator.
    EXPECT_EQ(g_walk.frames[5].pc, 0x1002u);
    EXPECT_EQ(g_walk.frames[5].edge, Edge::kTask);
    // The initial task's frame ends the path: a call, as on any physical path.
    EXPECT_EQ(g_walk.frames[6].pc, 0x2001u);
    EXPECT_EQ(g_walk.frames[6].edge, Edge::kCall);
  }
}

TEST(RecordedPath, ACaptureWithoutAChainStopsAtTheBoundaryWithNoTaskEdge) {
  const CodeRange entry = RangeOf(reinterpret_cast<const void*>(&task_entry));
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, nullptr);
    runtime_invoke(0);
    const LogicalResult& r = g_walk.result;
    EXPECT_FALSE(r.partial);
    EXPECT_EQ(r.recorded, 0u);
    ASSERT_EQ(r.depth, 3u);  // leaf, task_recurse(0), entry
    EXPECT_TRUE(entry.Contains(g_walk.frames[2].pc));
    EXPECT_EQ(g_walk.frames[2].edge, Edge::kCall);
  }
}

TEST(RecordedPath, WithoutBoundaryTheWalkIsPhysicalAsBefore) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, nullptr);
    g_walk.request.boundary_count = 0;
    runtime_invoke(0);
    // leaf, recurse, entry, then (runtime_invoke elided) the test body and gtest out
    // to main.
    EXPECT_GT(g_walk.result.depth, 5u);
    EXPECT_FALSE(g_walk.result.partial);
  }
}

TEST(RecordedPath, ASampleInTheSchedulingLoopLandsOnTheChainAlone) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, &kCreator);
    // The leaf plays runtime code here too: every frame above start_thread is elided.
    static CodeRange ranges[3];
    ranges[0] = g_walk.request.boundary[0];
    ranges[1] = g_walk.request.boundary[1];
    ranges[2] = RangeOf(reinterpret_cast<const void*>(&task_leaf));
    g_walk.request.elided = ranges;
    g_walk.request.elided_count = 3;
    pthread_t thread;
    ASSERT_EQ(pthread_create(&thread, nullptr, runtime_thread, nullptr), 0);
    ASSERT_EQ(pthread_join(thread, nullptr), 0);
    const LogicalResult& r = g_walk.result;
    EXPECT_FALSE(r.partial);
    ASSERT_EQ(r.depth, 3u);
    EXPECT_EQ(g_walk.frames[0].pc, 0x1001u);
    EXPECT_EQ(g_walk.frames[1].edge, Edge::kTask);
    EXPECT_EQ(g_walk.frames[2].pc, 0x2001u);
  }
}

// A sample in the tool's own callees while libomp calls the tool back (a creation
// path's capture, instrumentation): the frames below the tool are the tool's, and the
// runtime frame above it is the task's call into the runtime, not the frame that
// invoked the task: the sample lands on the task's frame that made the call, which
// carries the task edge. (It landed on the tool's callee, as a task entry of its own.)
TEST(RecordedPath, ASampleInTheToolCalledBackByTheRuntimeLandsOnTheTasksCall) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, &kCreator);
    static CodeRange elided[3], boundary[2];
    boundary[0] = elided[0] = RangeOf(reinterpret_cast<const void*>(&runtime_invoke_caller));
    boundary[1] = elided[1] = RangeOf(reinterpret_cast<const void*>(&runtime_entry));
    elided[2] = RangeOf(reinterpret_cast<const void*>(&tool_callback));
    g_walk.request.elided = elided;
    g_walk.request.elided_count = 3;
    g_walk.request.boundary = boundary;
    g_walk.request.boundary_count = 2;
    runtime_invoke_caller();
    const LogicalResult& r = g_walk.result;
    EXPECT_FALSE(r.partial);
    ASSERT_EQ(r.depth, 4u);
    EXPECT_TRUE(RangeOf(reinterpret_cast<const void*>(&task_calling_the_runtime)).Contains(g_walk.frames[0].pc))
        << std::hex << g_walk.frames[0].pc;
    EXPECT_EQ(g_walk.frames[0].edge, Edge::kTask);
    EXPECT_EQ(g_walk.frames[1].pc, 0x1001u);
    EXPECT_EQ(g_walk.frames[3].pc, 0x2001u);
  }
}

TEST(RecordedPath, ADeepTaskKeepsTheChainAsItsOutermostFrames) {
  const CodeRange recurse = RangeOf(reinterpret_cast<const void*>(&task_recurse));
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, &kCreator);
    g_walk.request.keep_outermost = 8;
    g_walk.request.max_walk = 1u << 16;
    runtime_invoke(500);
    const LogicalResult& r = g_walk.result;
    EXPECT_FALSE(r.partial);
    EXPECT_FALSE(r.truncated);
    ASSERT_EQ(r.depth, kMaxFrames);
    EXPECT_EQ(r.gap, kMaxFrames - 8);
    EXPECT_EQ(r.walked, 1u + 501u + 1u + 3u);
    EXPECT_EQ(r.elided, r.walked - kMaxFrames);
    // The outermost 8: four recursion levels, the entry (task edge), the chain.
    EXPECT_TRUE(recurse.Contains(g_walk.frames[kMaxFrames - 5].pc));
    EXPECT_EQ(g_walk.frames[kMaxFrames - 4].edge, Edge::kTask);
    EXPECT_EQ(g_walk.frames[kMaxFrames - 3].pc, 0x1001u);
    EXPECT_EQ(g_walk.frames[kMaxFrames - 2].pc, 0x1002u);
    EXPECT_EQ(g_walk.frames[kMaxFrames - 2].edge, Edge::kTask);
    EXPECT_EQ(g_walk.frames[kMaxFrames - 1].pc, 0x2001u);
  }
}

TEST(RecordedPath, APartialElementEndsThePathAsPartial) {
  const RecordedPath partial{&kInitial, kCreatorPcs, 2, true};
  Prepare(Mode::kFramePointer, &partial);
  runtime_invoke(0);
  EXPECT_TRUE(g_walk.result.partial);
  ASSERT_EQ(g_walk.result.depth, 5u);  // leaf, recurse, entry, the partial element only
  EXPECT_EQ(g_walk.frames[4].pc, 0x1002u);
}

TEST(RecordedPath, ACyclicChainIsBounded) {
  static RecordedPath cycle{nullptr, nullptr, 0, false};
  cycle.parent = &cycle;  // a corrupt chain of empty elements
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    Prepare(mode, &cycle);
    runtime_invoke(0);
    EXPECT_TRUE(g_walk.result.partial);
    EXPECT_EQ(g_walk.result.depth, 3u);
    EXPECT_EQ(g_walk.result.recorded, cilkprof::unwinder::kMaxSegmentChain);
  }
}

}  // namespace
