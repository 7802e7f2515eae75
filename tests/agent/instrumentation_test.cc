// A sample taken inside a work/span hook is `instrumentation`, never the program's work
// or overhead (agent/src/instrumentation.h: InstrumentedCall, which the engine's hook
// table is made of). The hooks here stand in for the engine's: each one raises a
// signal at itself, and the handler classifies the sample as the agent's sample
// handler does (blame.cc).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>

#include "instrumentation.h"
#include "workspan/engine.h"

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

// A hook of each of the runtime ABI's signatures, marked as the engine marks its own.
template <typename... Args>
constexpr auto kMarked = &InstrumentedCall<&SamplingHook<Args...>>::Call;

TEST_F(InstrumentationTest, SampleInsideAMarkedHookIsInstrumentation) {
  cilkprof_hooks_t marked{};
  marked.scope_enter = kMarked<cilkprof_frame_t*, const void*, const void*>;
  marked.spawn = kMarked<cilkprof_frame_t*, const void*, const void*>;
  marked.child_end = kMarked<cilkprof_frame_t*>;
  marked.continuation = kMarked<cilkprof_frame_t*>;
  marked.sync_begin = kMarked<cilkprof_frame_t*, const void*>;
  marked.sync_end = kMarked<cilkprof_frame_t*>;
  marked.scope_exit = kMarked<cilkprof_frame_t*>;
  marked.func_enter = kMarked<const void*, const void*>;
  marked.func_exit = kMarked<const void*, const void*>;
  const cilkprof_hooks_t* hooks = &marked;
  cilkprof_frame_t frame{};
  int site = 0;
  const auto expect_instrumentation = [&](const char* name, auto call) {
    g_seen = SampleKind::kIdle;
    const int calls = g_calls;
    call();
    EXPECT_EQ(g_calls, calls + 1) << name << ": the marked hook must call the hook";
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

  // The same hook unmarked, and a sample outside any hook: the runtime's own.
  g_seen = SampleKind::kIdle;
  SamplingHook<cilkprof_frame_t*>(&frame);
  EXPECT_EQ(g_seen, SampleKind::kOverhead);
  raise(SIGUSR1);
  EXPECT_EQ(g_seen, SampleKind::kOverhead);
}

// The engine's table has every hook of the ABI (each an InstrumentedCall, engine.cc).
TEST(EngineHooks, EveryHookIsThere) {
  workspan::Configure(workspan::EngineConfig{});
  const cilkprof_hooks_t* hooks = workspan::Hooks();
  ASSERT_NE(hooks, nullptr);
  void (*members[sizeof(cilkprof_hooks_t) / sizeof(void (*)())])();
  std::memcpy(members, hooks, sizeof(members));
  for (auto member : members) EXPECT_NE(member, nullptr);
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

// The tool's code by address (the hooks' prologues, the runtime's forwarders and scope
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
