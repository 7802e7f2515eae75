// A sample taken inside a work/span hook is `instrumentation`, never the program's work
// or overhead (agent/src/instrumentation.h, workspan/guarded_hooks.h). The hooks here
// stand in for the engine's: each one raises a signal at itself, and the handler
// classifies the sample as the agent's sample handler does (blame.cc).
#include <gtest/gtest.h>
#include <signal.h>

#include "instrumentation.h"
#include "workspan/guarded_hooks.h"

namespace cilkprof::agent {
namespace {

SampleKind g_seen = SampleKind::kIdle;
int g_calls = 0;

void Handler(int) { g_seen = ClassifySample(CILKPROF_STATE_OVERHEAD, InInstrumentation()); }

// A hook of any signature: takes a sample in the middle of its own work.
template <typename... Args>
void SamplingHook(Args...) {
  ++g_calls;
  raise(SIGUSR1);
}

class InstrumentationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct sigaction sa {};
    sa.sa_handler = &Handler;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old_), 0);
  }
  void TearDown() override { sigaction(SIGUSR1, &old_, nullptr); }
  struct sigaction old_ {};
};

TEST(ClassifySample, InstrumentationWinsOverEveryState) {
  for (uint32_t state : {CILKPROF_STATE_NOT_A_WORKER, CILKPROF_STATE_WORKING, CILKPROF_STATE_IDLE,
                         CILKPROF_STATE_OVERHEAD}) {
    EXPECT_EQ(ClassifySample(state, true), SampleKind::kInstrumentation) << state;
  }
  EXPECT_EQ(ClassifySample(CILKPROF_STATE_WORKING, false), SampleKind::kWork);
  EXPECT_EQ(ClassifySample(CILKPROF_STATE_NOT_A_WORKER, false), SampleKind::kWork);
  EXPECT_EQ(ClassifySample(CILKPROF_STATE_OVERHEAD, false), SampleKind::kOverhead);
  EXPECT_EQ(ClassifySample(CILKPROF_STATE_IDLE, false), SampleKind::kIdle);
}

TEST_F(InstrumentationTest, SampleInsideEveryGuardedHookIsInstrumentation) {
  cilkprof_hooks_t engine{};
  engine.scope_enter = &SamplingHook;
  engine.spawn = &SamplingHook;
  engine.child_end = &SamplingHook;
  engine.continuation = &SamplingHook;
  engine.sync_begin = &SamplingHook;
  engine.sync_end = &SamplingHook;
  engine.scope_exit = &SamplingHook;
  engine.func_enter = &SamplingHook;
  engine.func_exit = &SamplingHook;
  const cilkprof_hooks_t* hooks = workspan::GuardHooks(&engine);
  ASSERT_NE(hooks, nullptr);
  cilkprof_frame_t frame{};
  int site = 0;
  const auto expect_instrumentation = [&](const char* name, auto call) {
    g_seen = SampleKind::kIdle;
    const int calls = g_calls;
    call();
    EXPECT_EQ(g_calls, calls + 1) << name << ": the guarded hook must call the engine's";
    EXPECT_EQ(g_seen, SampleKind::kInstrumentation) << name;
    EXPECT_FALSE(InInstrumentation()) << name << ": the mark must end with the hook";
  };
  expect_instrumentation("scope_enter", [&] { CILKPROF_HOOK(hooks, scope_enter, &frame, &site, &site); });
  expect_instrumentation("spawn", [&] { CILKPROF_HOOK(hooks, spawn, &frame, &site, &site); });
  expect_instrumentation("child_end", [&] { CILKPROF_HOOK(hooks, child_end, &frame); });
  expect_instrumentation("continuation", [&] { CILKPROF_HOOK(hooks, continuation, &frame); });
  expect_instrumentation("sync_begin", [&] { CILKPROF_HOOK(hooks, sync_begin, &frame, &site); });
  expect_instrumentation("sync_end", [&] { CILKPROF_HOOK(hooks, sync_end, &frame); });
  expect_instrumentation("scope_exit", [&] { CILKPROF_HOOK(hooks, scope_exit, &frame); });
  expect_instrumentation("func_enter", [&] { CILKPROF_HOOK(hooks, func_enter, &site, &site); });
  expect_instrumentation("func_exit", [&] { CILKPROF_HOOK(hooks, func_exit, &site, &site); });

  // The same hook called unguarded, and a sample outside any hook: the runtime's own.
  g_seen = SampleKind::kIdle;
  engine.sync_end(&frame);
  EXPECT_EQ(g_seen, SampleKind::kOverhead);
  raise(SIGUSR1);
  EXPECT_EQ(g_seen, SampleKind::kOverhead);
}

TEST(GuardHooks, NullStaysNull) {
  EXPECT_EQ(workspan::GuardHooks(nullptr), nullptr);
  cilkprof_hooks_t engine{};
  engine.spawn = &SamplingHook;
  const cilkprof_hooks_t* hooks = workspan::GuardHooks(&engine);
  ASSERT_NE(hooks, nullptr);
  EXPECT_NE(hooks->spawn, nullptr);
  EXPECT_EQ(hooks->scope_enter, nullptr);  // the runtime skips a hook the tool has not
  EXPECT_EQ(hooks->scope_exit, nullptr);
}

TEST(InstrumentationScope, Nests) {
  EXPECT_FALSE(InInstrumentation());
  {
    InstrumentationScope outer;
    {
      InstrumentationScope inner;
      EXPECT_TRUE(InInstrumentation());
    }
    EXPECT_TRUE(InInstrumentation());
  }
  EXPECT_FALSE(InInstrumentation());
}

}  // namespace
}  // namespace cilkprof::agent

namespace cilkprof::agent {
namespace {

// The tool's code by address (the guarded wrappers, the runtime's forwarders and scope
// entry stubs): [lo, hi) only, once per range, at most kMaxToolCodeRanges ranges. The
// table is process-wide, so this test uses addresses no other test registers.
TEST(ToolCode, RangesAreHalfOpenAndDeduplicated) {
  constexpr uintptr_t kBase = 0x7f0000001000;
  EXPECT_FALSE(InToolCode(kBase));
  ASSERT_TRUE(AddToolCode(kBase, kBase + 0x40));
  ASSERT_TRUE(AddToolCode(kBase, kBase + 0x40));  // again: no second entry
  EXPECT_FALSE(InToolCode(kBase - 1));
  EXPECT_TRUE(InToolCode(kBase));
  EXPECT_TRUE(InToolCode(kBase + 0x3f));
  EXPECT_FALSE(InToolCode(kBase + 0x40));
  EXPECT_FALSE(AddToolCode(kBase + 0x100, kBase + 0x100));  // empty
  // Fill the table: the ranges that fit are found, the one beyond is refused.
  int added = 1;
  for (uintptr_t lo = kBase + 0x1000; AddToolCode(lo, lo + 8); lo += 0x1000) {
    EXPECT_TRUE(InToolCode(lo + 7));
    ++added;
  }
  EXPECT_LE(added, kMaxToolCodeRanges);
  EXPECT_TRUE(InToolCode(kBase + 0x20));
}

}  // namespace
}  // namespace cilkprof::agent
