// Late attach (cilkprof/runtime_abi.h): cilkprof_runtime_view and
// cilkprof_runtime_set_hooks, from a tool that is not there at start-up (this program
// defines no cilkprof_tool_attach). A change of hooks must take effect only while no
// top-level computation (root) runs: a tool sees every event of a computation or none.
// Runs with CILK_NWORKERS=2 CILK_FORCE_STEAL=1, so every continuation after a spawn
// runs on the other worker (a pool thread runs strands in every root).
// Each test expects a fresh process (ctest runs each in its own); run all-in-one, the
// ones that need a runtime not yet started skip.
#include <cilk/cilk.hpp>
#include <cilkprof/runtime_abi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>
#include <utility>
#include <vector>

extern "C" void __cyg_profile_func_enter(void* function, void* caller);

namespace {

// Events seen by the counting tool, by kind.
struct Counts {
  long enter = 0, spawn = 0, child_end = 0, continuation = 0, sync_begin = 0, sync_end = 0, exit = 0, func = 0;
  bool operator==(const Counts&) const = default;
  long Total() const { return enter + spawn + child_end + continuation + sync_begin + sync_end + exit + func; }
};

std::atomic<long> g_enter, g_spawn, g_child_end, g_continuation, g_sync_begin, g_sync_end, g_exit, g_func;

Counts Now() {
  return Counts{g_enter.load(), g_spawn.load(),    g_child_end.load(), g_continuation.load(),
                g_sync_begin.load(), g_sync_end.load(), g_exit.load(), g_func.load()};
}

Counts Minus(const Counts& a, const Counts& b) {
  return Counts{a.enter - b.enter,           a.spawn - b.spawn,           a.child_end - b.child_end,
                a.continuation - b.continuation, a.sync_begin - b.sync_begin, a.sync_end - b.sync_end,
                a.exit - b.exit,             a.func - b.func};
}

const cilkprof_hooks_t kCounting = {
    [](cilkprof_frame_t*, const void*, const void*) { g_enter.fetch_add(1); },
    [](cilkprof_frame_t*, const void*, const void*) { g_spawn.fetch_add(1); },
    [](cilkprof_frame_t*) { g_child_end.fetch_add(1); },
    [](cilkprof_frame_t*) { g_continuation.fetch_add(1); },
    [](cilkprof_frame_t*, const void*) { g_sync_begin.fetch_add(1); },
    [](cilkprof_frame_t*) { g_sync_end.fetch_add(1); },
    [](cilkprof_frame_t*) { g_exit.fetch_add(1); },
    [](const void*, const void*) { g_func.fetch_add(1); },
    [](const void*, const void*) { g_func.fetch_add(1); },
};

// One function-hook call, as code built with -finstrument-functions makes.
void CallFunctionHook() {
  __cyg_profile_func_enter(reinterpret_cast<void*>(&CallFunctionHook), __builtin_return_address(0));
}

// A root with a fixed shape: a scope spawning `children` leaves (each with a scope of
// its own, entered on whichever worker runs it), then an explicit sync. `middle`
// runs inside the root between two spawns.
template <class Middle>
void Computation(int children, Middle&& middle) {
  cilk::run([&] {
    cilk::scope s;
    s.spawn([] { cilk::scope leaf; });
    middle();
    for (int i = 1; i < children; ++i) s.spawn([] { cilk::scope leaf; });
    s.sync();
  });
}

void Computation(int children) {
  Computation(children, [] {});
}

// What the counting tool sees of one whole Computation(children).
Counts Reference(int children) {
  cilkprof_runtime_set_hooks(&kCounting);  // no root runs: at once
  const Counts before = Now();
  Computation(children);
  const Counts seen = Minus(Now(), before);
  cilkprof_runtime_set_hooks(nullptr);
  return seen;
}

// Starts the runtime without running a root.
void StartRuntimeWithoutRoot() { (void)cilk::detail::automatic_grain(1); }

bool RuntimeStarted() { return cilkprof_runtime_view() != nullptr; }

// Runs Computation(children) on a thread of its own; the request `change` is made
// from this thread while that root runs (between its two spawns). Returns what the
// counting tool saw of that root.
template <class Change>
Counts ChangeDuringRoot(int children, Change&& change) {
  std::latch root_running(1), changed(1);
  Counts before, after;
  std::thread root([&] {
    before = Now();
    Computation(children, [&] {
      root_running.count_down();
      changed.wait();
    });
    after = Now();
  });
  root_running.wait();
  change();
  changed.count_down();
  root.join();
  return Minus(after, before);
}

// The pool threads' cilk::detail::tls_inline_scopes, seen by strands that run there.
std::vector<bool> PoolInlineFlags() {
  std::vector<bool> flags;
  std::atomic<bool> busy{false};
  const cilkprof_runtime_t* view = cilkprof_runtime_view();
  auto note = [&] {
    const cilkprof_worker_t* me = view->current_worker();
    if (me == nullptr || me->worker_id == 0) return;
    while (busy.exchange(true)) {
    }
    flags.push_back(cilk::detail::tls_inline_scopes);
    busy.store(false);
  };
  cilk::run([&] {
    cilk::scope s;
    for (int i = 0; i < 8; ++i) {
      s.spawn([&] { note(); });
      note();  // the continuation: on the pool thread (forced steal)
    }
  });
  return flags;
}

}  // namespace

TEST(LateAttach, ViewIsNullUntilTheRuntimeStartsAndThenStaysThePointer) {
  if (RuntimeStarted()) GTEST_SKIP() << "needs a process whose runtime has not started (ctest runs one per test)";
  EXPECT_EQ(cilkprof_runtime_view(), nullptr);
  EXPECT_EQ(cilkprof_runtime_view(), nullptr) << "asking must not start the runtime";
  StartRuntimeWithoutRoot();
  const cilkprof_runtime_t* view = cilkprof_runtime_view();
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->abi_version, CILKPROF_RUNTIME_ABI_VERSION);
  EXPECT_STREQ(view->name, "cilk-model");
  EXPECT_EQ(*view->workers, 2u);
  Computation(3);
  EXPECT_EQ(cilkprof_runtime_view(), view);
}

TEST(LateAttach, RequestBeforeTheStartTakesEffectAtTheStart) {
  if (RuntimeStarted()) GTEST_SKIP() << "needs a process whose runtime has not started (ctest runs one per test)";
  cilkprof_runtime_set_hooks(&kCounting);
  const Counts before = Now();
  CallFunctionHook();
  EXPECT_EQ(Minus(Now(), before).func, 0) << "function hooks are forwarded only once the runtime started";
  Computation(3);  // starts the runtime
  const Counts seen = Minus(Now(), before);
  EXPECT_EQ(seen.enter, 2 + 3);
  EXPECT_EQ(seen.spawn, 3);
  EXPECT_EQ(seen.exit, seen.enter);
  cilkprof_runtime_set_hooks(nullptr);
}

TEST(LateAttach, WithNoRootRunningAChangeTakesEffectAtOnce) {
  StartRuntimeWithoutRoot();  // and never run a root before the checks
  cilkprof_runtime_set_hooks(&kCounting);
  Counts before = Now();
  CallFunctionHook();
  EXPECT_EQ(Minus(Now(), before).func, 1) << "installed without waiting for any root";
  cilkprof_runtime_set_hooks(nullptr);
  before = Now();
  CallFunctionHook();
  EXPECT_EQ(Minus(Now(), before).func, 0) << "removed without waiting for any root";
}

TEST(LateAttach, InstallDuringARootTakesEffectWhenItEnds) {
  StartRuntimeWithoutRoot();
  const Counts whole = Reference(4);
  ASSERT_EQ(whole.spawn, 4);
  ASSERT_EQ(whole.enter, 2 + 4);
  Counts function_hook_while_pending;
  const Counts during = ChangeDuringRoot(4, [&] {
    cilkprof_runtime_set_hooks(&kCounting);
    const Counts before = Now();
    CallFunctionHook();  // the function hooks wait with the rest
    function_hook_while_pending = Minus(Now(), before);
  });
  EXPECT_EQ(function_hook_while_pending.Total(), 0);
  EXPECT_EQ(during.Total(), 0) << "no event of a computation that began before the install";
  const Counts before = Now();
  Computation(4);
  EXPECT_EQ(Minus(Now(), before), whole) << "the next computation is seen whole";
  cilkprof_runtime_set_hooks(nullptr);
}

TEST(LateAttach, RemovalDuringARootTakesEffectWhenItEnds) {
  StartRuntimeWithoutRoot();
  const Counts whole = Reference(4);
  cilkprof_runtime_set_hooks(&kCounting);
  const Counts during = ChangeDuringRoot(4, [] { cilkprof_runtime_set_hooks(nullptr); });
  EXPECT_EQ(during, whole) << "a removal never cuts a computation short";
  const Counts before = Now();
  Computation(4);
  CallFunctionHook();
  EXPECT_EQ(Minus(Now(), before).Total(), 0) << "no event after the removal took effect";
}

TEST(LateAttach, RootWaitingToEnterWhileTheChangeWaitsIsSeenWhole) {
  // Roots on two threads: the second enters while the first runs (it waits for the
  // first: one root at a time) after the install was requested. The first is not
  // seen at all, the second whole, whatever the interleaving.
  StartRuntimeWithoutRoot();
  const Counts whole3 = Reference(3);
  std::latch first_running(1), requested(1);
  Counts first, second;
  std::thread a([&] {
    const Counts before = Now();
    Computation(5, [&] {
      first_running.count_down();
      requested.wait();
    });
    first = Minus(Now(), before);
  });
  first_running.wait();
  cilkprof_runtime_set_hooks(&kCounting);
  std::thread b([&] {
    // Counted by kind: spawns tell the two computations apart (5 against 3).
    Computation(3);
  });
  const Counts before = Now();
  requested.count_down();
  a.join();
  b.join();
  const Counts total = Minus(Now(), before);
  EXPECT_EQ(total, whole3) << "exactly the second computation, whole";
  EXPECT_EQ(first.spawn, 0);
  cilkprof_runtime_set_hooks(nullptr);
}

TEST(LateAttach, PoolThreadsInlineScopesFollowTheHooks) {
  StartRuntimeWithoutRoot();
  std::vector<bool> flags = PoolInlineFlags();
  ASSERT_FALSE(flags.empty()) << "forced steals run continuations on the pool thread";
  for (bool inline_scopes : flags) EXPECT_TRUE(inline_scopes) << "no tool: scopes inline";
  cilkprof_runtime_set_hooks(&kCounting);
  flags = PoolInlineFlags();
  ASSERT_FALSE(flags.empty());
  for (bool inline_scopes : flags) EXPECT_FALSE(inline_scopes) << "a tool: scopes through the library, so hooks run";
  cilkprof_runtime_set_hooks(nullptr);
  flags = PoolInlineFlags();
  ASSERT_FALSE(flags.empty());
  for (bool inline_scopes : flags) EXPECT_TRUE(inline_scopes) << "tool removed: inline again";
}

TEST(LateAttach, TogglingAgainstRootsOnTwoThreadsNeverSplitsAComputation) {
  // One thread installs and removes the hooks over and over while two threads run
  // small computations: every computation is seen whole or not at all, so the
  // per-kind totals stay in the proportions of whole computations.
  StartRuntimeWithoutRoot();
  const Counts one = Reference(2);
  constexpr int kRoots = 300, kToggles = 600;
  const Counts before = Now();
  std::thread toggler([] {
    for (int i = 0; i < kToggles; ++i) cilkprof_runtime_set_hooks(i % 2 == 0 ? &kCounting : nullptr);
  });
  auto roots = [] {
    for (int i = 0; i < kRoots; ++i) Computation(2);
  };
  std::thread r1(roots), r2(roots);
  toggler.join();
  r1.join();
  r2.join();
  cilkprof_runtime_set_hooks(nullptr);
  const Counts seen = Minus(Now(), before);
  ASSERT_EQ(one.spawn, 2);
  const long computations = seen.spawn / one.spawn;
  EXPECT_EQ(seen.spawn % one.spawn, 0);
  EXPECT_EQ(seen.enter, computations * one.enter);
  EXPECT_EQ(seen.exit, computations * one.exit);
  EXPECT_EQ(seen.child_end, computations * one.child_end);
  EXPECT_EQ(seen.continuation, computations * one.continuation);
  EXPECT_EQ(seen.sync_begin, computations * one.sync_begin);
  EXPECT_EQ(seen.sync_end, computations * one.sync_end);
}
