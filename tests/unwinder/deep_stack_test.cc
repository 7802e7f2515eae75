// UnwindLogical() on a stack deeper than its frame buffer (issue 12, row 8): a
// synthetic 5,000-deep recursion, walked in both modes. The sample keeps its innermost
// frames and its outermost ones (down to the test's own root function) with the middle
// elided and counted, and the walk stays bounded by max_walk.
#include <dlfcn.h>
#include <link.h>
#include <ucontext.h>

#include <gtest/gtest.h>

#include "cilkprof/unwinder/logical.h"

#if defined(__clang__)
#define DEEP_FN extern "C" __attribute__((noinline, optnone))
#else
#define DEEP_FN extern "C" __attribute__((noinline, noipa))
#endif

namespace {

using cilkprof::unwinder::Frame;
using cilkprof::unwinder::LogicalRequest;
using cilkprof::unwinder::LogicalResult;
using cilkprof::unwinder::Mode;

constexpr uint32_t kRecursion = 5000;
constexpr uint32_t kMaxFrames = 512;
constexpr uint32_t kKeep = 64;

struct DeepWalk {
  LogicalRequest request;
  Frame frames[kMaxFrames];
  LogicalResult result;
};
DeepWalk g_walk;

}  // namespace

DEEP_FN void deep_leaf() {
  ucontext_t context;
  if (getcontext(&context) != 0) return;
  g_walk.request.context = &context;
  g_walk.result = cilkprof::unwinder::UnwindLogical(g_walk.request, g_walk.frames, kMaxFrames);
  g_walk.request.context = nullptr;
}

DEEP_FN uint32_t deep_recurse(uint32_t n) {
  if (n == 0) {
    deep_leaf();
    return 0;
  }
  const uint32_t below = deep_recurse(n - 1);
  asm volatile("" ::: "memory");  // no tail call: every level keeps its frame
  return below + 1;
}

DEEP_FN uint32_t deep_root() {
  const uint32_t levels = deep_recurse(kRecursion);
  asm volatile("" ::: "memory");
  return levels;
}

namespace {

struct Range {
  uintptr_t lo = 0, hi = 0;
  bool Contains(uintptr_t pc) const { return pc >= lo && pc < hi; }
};

Range RangeOf(const void* fn) {
  Dl_info info;
  ElfW(Sym)* symbol = nullptr;
  Range range;
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

LogicalResult WalkDeep(Mode mode, uint32_t keep, uint32_t max_walk) {
  g_walk = DeepWalk{};
  g_walk.request.mode = mode;
  g_walk.request.probe_frameless_leaf = false;  // a getcontext() context
  g_walk.request.keep_outermost = keep;
  g_walk.request.max_walk = max_walk;
  EXPECT_EQ(deep_root(), kRecursion);
  return g_walk.result;
}

const char* Name(Mode mode) { return mode == Mode::kDwarf ? "dwarf" : "fp"; }

TEST(DeepStack, KeepsInnermostAndOutermostFramesWithTheGapBetweenInBothModes) {
  const Range leaf = RangeOf(reinterpret_cast<const void*>(&deep_leaf));
  const Range recurse = RangeOf(reinterpret_cast<const void*>(&deep_recurse));
  const Range root = RangeOf(reinterpret_cast<const void*>(&deep_root));
  ASSERT_NE(root.lo, 0u);
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    const LogicalResult r = WalkDeep(mode, kKeep, 1u << 16);
    EXPECT_FALSE(r.partial);
    EXPECT_FALSE(r.truncated);
    ASSERT_EQ(r.depth, kMaxFrames);
    ASSERT_EQ(r.gap, kMaxFrames - kKeep);
    // Everything walked is either kept or counted as elided.
    EXPECT_GT(r.walked, kRecursion);
    EXPECT_EQ(r.elided, r.walked - kMaxFrames);
    // Innermost first: the leaf, then recursion levels up to the gap.
    EXPECT_TRUE(leaf.Contains(g_walk.frames[0].pc));
    for (uint32_t i = 1; i < r.gap; ++i) ASSERT_TRUE(recurse.Contains(g_walk.frames[i].pc)) << "frame " << i;
    // After the gap, in order: the outermost recursion levels, deep_root, and its
    // callers (the test body, gtest, main) to the end of the stack.
    uint32_t i = r.gap;
    while (i < r.depth && recurse.Contains(g_walk.frames[i].pc)) ++i;
    EXPECT_GT(i, r.gap) << "the outermost recursion levels are missing";
    ASSERT_LT(i, r.depth);
    EXPECT_TRUE(root.Contains(g_walk.frames[i].pc)) << "deep_root must follow the recursion";
    for (uint32_t j = i + 1; j < r.depth; ++j) {
      EXPECT_FALSE(recurse.Contains(g_walk.frames[j].pc)) << "out of order at " << j;
    }
    // The kept frames add up: levels before the gap + after it + elided = recursion.
    const uint32_t levels = (r.gap - 1) + (i - r.gap) + r.elided;
    EXPECT_EQ(levels, kRecursion + 1);
  }
}

TEST(DeepStack, TheWalkIsBoundedAndATooDeepStackIsTruncatedKeepingItsInnermostFrames) {
  const Range leaf = RangeOf(reinterpret_cast<const void*>(&deep_leaf));
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    const LogicalResult r = WalkDeep(mode, kKeep, 2000);
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.walked, 2000u);
    EXPECT_EQ(r.depth, kMaxFrames - kKeep);
    EXPECT_EQ(r.gap, r.depth);
    EXPECT_EQ(r.elided, 2000u - (kMaxFrames - kKeep));
    EXPECT_TRUE(leaf.Contains(g_walk.frames[0].pc));
  }
}

TEST(DeepStack, WithoutARingTheWalkStopsAtTheBufferAsBefore) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(Name(mode));
    const LogicalResult r = WalkDeep(mode, 0, 0);
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.depth, kMaxFrames);
    EXPECT_EQ(r.elided, 0u);
  }
}

}  // namespace
