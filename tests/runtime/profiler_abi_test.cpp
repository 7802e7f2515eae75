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
};
std::mutex g_mutex;
std::vector<Record> g_records;
std::atomic<long> g_sequence{0};
std::atomic<bool> g_recording{false};

void Note(Event event, cilkprof_frame_t* frame, const void* callsite = nullptr) {
  if (!g_recording.load()) return;
  std::lock_guard<std::mutex> guard(g_mutex);
  g_records.push_back({event, frame, callsite, g_sequence.fetch_add(1)});
}

const cilkprof_hooks_t kHooks = {
    [](cilkprof_frame_t* f, const void* site) { Note(Event::kScopeEnter, f, site); },
    [](cilkprof_frame_t* f, const void* site) { Note(Event::kSpawn, f, site); },
    [](cilkprof_frame_t* f) { Note(Event::kChildEnd, f); },
    [](cilkprof_frame_t* f) { Note(Event::kContinuation, f); },
    [](cilkprof_frame_t* f, const void* site) { Note(Event::kSyncBegin, f, site); },
    [](cilkprof_frame_t* f) { Note(Event::kSyncEnd, f); },
    [](cilkprof_frame_t* f) { Note(Event::kScopeExit, f); },
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
