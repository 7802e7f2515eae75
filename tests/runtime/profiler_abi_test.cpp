// The runtime's side of cilkprof/runtime_abi.h, seen from a test tool that defines
// cilkprof_tool_attach. Runs with CILK_NWORKERS=2 CILK_FORCE_STEAL=1, so every
// spawn's continuation is resumed by the other worker.
#include <cilk/cilk.hpp>
#include <cilkprof/runtime_abi.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

const cilkprof_runtime_t* g_runtime_view = nullptr;
std::atomic<int> g_attach_calls{0};

enum class Event { kScopeEnter, kSpawn, kChildEnd, kContinuation, kSyncBegin, kSyncEnd, kScopeExit };
struct Record {
  Event event;
  cilkprof_frame_t* frame;
  const void* callsite;
  long sequence;
  const void* extra;  // scope_enter: the caller; spawn: the callable
};
std::mutex g_mutex;
std::vector<Record> g_records;
std::atomic<long> g_sequence{0};
std::atomic<bool> g_recording{false};

void Note(Event event, cilkprof_frame_t* frame, const void* callsite = nullptr, const void* extra = nullptr) {
  if (!g_recording.load()) return;
  std::lock_guard<std::mutex> guard(g_mutex);
  g_records.push_back({event, frame, callsite, g_sequence.fetch_add(1), extra});
}

const cilkprof_hooks_t kHooks = {
    [](cilkprof_frame_t* f, const void* site, const void* caller) { Note(Event::kScopeEnter, f, site, caller); },
    [](cilkprof_frame_t* f, const void* site, const void* callable) { Note(Event::kSpawn, f, site, callable); },
    [](cilkprof_frame_t* f) { Note(Event::kChildEnd, f); },
    [](cilkprof_frame_t* f) { Note(Event::kContinuation, f); },
    [](cilkprof_frame_t* f, const void* site) { Note(Event::kSyncBegin, f, site); },
    [](cilkprof_frame_t* f) { Note(Event::kSyncEnd, f); },
    [](cilkprof_frame_t* f) { Note(Event::kScopeExit, f); },
    nullptr,  // no function hooks: nothing here is compiled with -finstrument-functions
    nullptr,
};

}  // namespace

extern "C" const cilkprof_hooks_t* cilkprof_tool_attach(const cilkprof_runtime_t* runtime) {
  g_runtime_view = runtime;
  g_attach_calls.fetch_add(1);
  return &kHooks;
}

namespace {

cilkprof_worker_t* Me() { return g_runtime_view->current_worker(); }

}  // namespace

struct ChildView {
  uint32_t state = 0;
  uint32_t worker = 0;
  const cilkprof_segment_t* segment = nullptr;
  cilkprof_segment_t copy{};
  uintptr_t local_address = 0;
  uint32_t working = 0;
};

struct ParentView {
  const cilkprof_segment_t* segment = nullptr;
  uint32_t worker_after_spawn = 0;
  uintptr_t local_address = 0;
};

// External linkage, so dladdr names it (the executable exports its symbols).
__attribute__((noinline)) void Spawner(ParentView* parent, ChildView* child) {
  volatile int local = 0;
  parent->local_address = reinterpret_cast<uintptr_t>(&local);
  parent->segment = Me()->segment;
  cilk::scope s;
  s.spawn([child] {
    volatile int child_local = 0;
    cilkprof_worker_t* me = Me();
    child->state = me->state;
    child->worker = me->worker_id;
    child->segment = me->segment;
    child->copy = *me->segment;
    child->local_address = reinterpret_cast<uintptr_t>(&child_local);
    child->working = __atomic_load_n(g_runtime_view->working, __ATOMIC_RELAXED);  // another thread writes it
  });
  parent->worker_after_spawn = Me()->worker_id;
  s.sync();
  (void)local;
}

namespace {

TEST(ProfilerAbi, ToolAttachedOnceWithTheRuntimeView) {
  cilk::run([] {});
  ASSERT_NE(g_runtime_view, nullptr);
  EXPECT_EQ(g_attach_calls.load(), 1);
  EXPECT_EQ(g_runtime_view->abi_version, CILKPROF_RUNTIME_ABI_VERSION);
  EXPECT_STREQ(g_runtime_view->name, "cilk-model");
  EXPECT_EQ(*g_runtime_view->workers, 2u);
  // Outside the runtime this thread is not a worker.
  EXPECT_EQ(g_runtime_view->current_worker(), nullptr);
}

TEST(ProfilerAbi, SegmentChainInsideAStolenChild) {
  cilk::run([] {});
  void* invoke_child = dlsym(RTLD_DEFAULT, "cilk_invoke_child");
  ASSERT_NE(invoke_child, nullptr);
  for (int round = 0; round < 20; ++round) {
    ParentView parent;
    ChildView child;
    cilk::run([&] {
      EXPECT_EQ(Me()->state, static_cast<uint32_t>(CILKPROF_STATE_WORKING));
      Spawner(&parent, &child);
    });
    EXPECT_EQ(child.state, static_cast<uint32_t>(CILKPROF_STATE_WORKING));
    EXPECT_GE(child.working, 1u);
    ASSERT_NE(child.segment, nullptr);
    EXPECT_EQ(child.copy.parent, parent.segment);
    // The child's locals live on its own fiber stack.
    EXPECT_GE(child.local_address, child.copy.stack_lo);
    EXPECT_LT(child.local_address, child.copy.stack_hi);
    // The entry range holds the runtime's entry frame.
    EXPECT_GE(reinterpret_cast<uintptr_t>(invoke_child), child.copy.entry_lo);
    EXPECT_LT(reinterpret_cast<uintptr_t>(invoke_child), child.copy.entry_hi);
    // The spawn point is inside Spawner, with Spawner's stack pointer.
    Dl_info info;
    ASSERT_NE(dladdr(reinterpret_cast<void*>(child.copy.spawn.pc), &info), 0);
    EXPECT_EQ(info.dli_saddr, reinterpret_cast<void*>(&Spawner)) << (info.dli_sname ? info.dli_sname : "?");
    EXPECT_LE(child.copy.spawn.sp, parent.local_address);
    EXPECT_GE(child.copy.spawn.sp, parent.segment->stack_lo);
    EXPECT_LT(child.copy.spawn.sp, parent.segment->stack_hi);
    // CILK_FORCE_STEAL: the continuation ran on the other worker.
    EXPECT_NE(parent.worker_after_spawn, child.worker) << "round " << round;
  }
}

long Fib(int n) {
  if (n < 2) return n;
  long x = 0;
  cilk::scope s;
  s.spawn([&] { x = Fib(n - 1); });
  const long y = Fib(n - 2);
  s.sync();
  return x + y;
}

TEST(ProfilerAbi, HookSequencePerFrame) {
  g_records.clear();
  g_recording.store(true);
  const long result = cilk::run([] { return Fib(10); });
  g_recording.store(false);
  EXPECT_EQ(result, 55);

  // Group by frame (a frame address is reused only after its scope_exit).
  std::vector<Record> records = g_records;
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.sequence < b.sequence; });
  std::vector<std::vector<Record>> frames;
  std::vector<std::pair<cilkprof_frame_t*, std::size_t>> open;
  for (const Record& r : records) {
    auto it = std::find_if(open.begin(), open.end(), [&](const auto& o) { return o.first == r.frame; });
    if (r.event == Event::kScopeEnter) {
      ASSERT_EQ(it, open.end()) << "scope_enter on a frame still open";
      open.emplace_back(r.frame, frames.size());
      frames.push_back({r});
      continue;
    }
    ASSERT_NE(it, open.end()) << "event on a frame never entered";
    frames[it->second].push_back(r);
    if (r.event == Event::kScopeExit) open.erase(it);
  }
  EXPECT_TRUE(open.empty());
  // fib(10) has fib(n>=2) frames: 88 scopes (one per call with n >= 2), plus run's root scope.
  EXPECT_EQ(frames.size(), 89u);
  int spawns = 0;
  for (const auto& frame : frames) {
    int spawn = 0, child_end = 0, continuation = 0, sync_begin = 0, sync_end = 0;
    long last_child_end = -1, first_sync_end = -1;
    for (const Record& r : frame) {
      switch (r.event) {
        case Event::kSpawn:
          ++spawn;
          EXPECT_NE(r.callsite, nullptr);
          break;
        case Event::kChildEnd: ++child_end; last_child_end = r.sequence; break;
        case Event::kContinuation: ++continuation; break;
        case Event::kSyncBegin: ++sync_begin; EXPECT_NE(r.callsite, nullptr); break;
        case Event::kSyncEnd:
          ++sync_end;
          if (first_sync_end < 0) first_sync_end = r.sequence;
          break;
        default: break;
      }
    }
    EXPECT_EQ(frame.front().event, Event::kScopeEnter);
    EXPECT_EQ(frame.back().event, Event::kScopeExit);
    EXPECT_EQ(spawn, child_end);
    EXPECT_EQ(spawn, continuation);
    EXPECT_EQ(sync_begin, sync_end);
    if (spawn > 0) {
      EXPECT_GE(sync_begin, 1);
      EXPECT_LT(last_child_end, first_sync_end) << "sync_end before every child ended";
    }
    spawns += spawn;
  }
  EXPECT_EQ(spawns, 88);
}

}  // namespace

// ABI version 2: scope_enter names the function's own call site (its return address,
// in the caller) and spawn the callable the runtime runs on the child's fiber. The
// functions have external linkage (the executable exports them), so dladdr names them.
struct NamedFibChild {
  long* x;
  int n;
  void operator()() const;
};

__attribute__((noinline)) long NamedFib(int n) {
  if (n < 2) return n;
  long x = 0;
  cilk::scope s;
  s.spawn(NamedFibChild{&x, n - 1});
  const long y = NamedFib(n - 2);
  s.sync();
  return x + y;
}

__attribute__((noinline)) void NamedFibChild::operator()() const { *x = NamedFib(n); }

__attribute__((noinline)) long RunNamedFib(int n) {
  return cilk::run([n] { return NamedFib(n); });
}

namespace {

std::string SymbolOf(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_sname == nullptr) return "?";
  return info.dli_sname;
}

TEST(ProfilerAbi, ScopeEnterNamesTheCallerAndSpawnTheCallable) {
  g_records.clear();
  g_recording.store(true);
  EXPECT_EQ(RunNamedFib(8), 21);
  g_recording.store(false);
  int fib_frames = 0, root_frames = 0, spawns = 0, unnamed_callers = 0;
  for (const Record& r : g_records) {
    if (r.event == Event::kScopeEnter) {
      ASSERT_NE(r.extra, nullptr);
      // The scope's own address is in the function that holds it; the caller is a
      // return address in the function that called that one.
      const std::string caller = SymbolOf(static_cast<const char*>(r.extra) - 1);
      if (SymbolOf(r.callsite) == "_Z8NamedFibi") {
        ++fib_frames;
        // NamedFib(n - 2) from NamedFib itself, NamedFib(n - 1) from the child, and
        // the first call from run's lambda (in run<F>, a local symbol dladdr cannot name).
        if (caller == "?") {
          ++unnamed_callers;
        } else {
          EXPECT_TRUE(caller == "_Z8NamedFibi" || caller == "_ZNK13NamedFibChildclEv") << caller;
        }
      } else {
        // cilk::run's root scope: run<F> is never inlined, its caller is RunNamedFib.
        ++root_frames;
        EXPECT_EQ(caller, "_Z11RunNamedFibi");
      }
    }
    if (r.event == Event::kSpawn) {
      ++spawns;
      EXPECT_EQ(SymbolOf(r.extra), "_ZNK13NamedFibChildclEv");
      Dl_info info;
      ASSERT_NE(dladdr(r.extra, &info), 0);
      EXPECT_EQ(info.dli_saddr, r.extra) << "the callable is a function's entry";
    }
  }
  EXPECT_EQ(root_frames, 1);
  EXPECT_EQ(unnamed_callers, 1);
  EXPECT_EQ(fib_frames, 33);  // NamedFib(n) with n >= 2 for n = 8
  EXPECT_EQ(spawns, 33);
}

}  // namespace
