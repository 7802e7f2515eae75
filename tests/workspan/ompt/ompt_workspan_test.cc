// The OpenMP work/span engine (agent/src/ompt/ompt_workspan.h) driven by synthetic
// OMPT event sequences, as libomp reports them, under the counter clock: exact work,
// span, burdened span and per-site figures of known dags. "Threads" are real threads
// that run the steps given to them one at a time, so every interleaving is chosen by
// the test and the results are deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "ompt/ompt_workspan.h"

namespace ws = cilkprof::agent::ompt::workspan;
using cilkprof::agent::ompt::RegionRecord;
using cilkprof::agent::ompt::TaskRecord;

namespace {

constexpr uint64_t kBurden = 100;

// A thread that runs the steps it is given, in order, each to its end before Run returns.
class Worker {
 public:
  Worker() : thread_([this] { Loop(); }) {}
  ~Worker() {
    Run(nullptr);
    thread_.join();
  }
  void Run(std::function<void()> step) {
    std::unique_lock<std::mutex> lock(mu_);
    step_ = std::move(step);
    has_step_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !has_step_; });
  }

 private:
  void Loop() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return has_step_; });
      const bool stop = step_ == nullptr;
      if (!stop) step_();
      has_step_ = false;
      cv_.notify_all();
      if (stop) return;
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> step_;
  bool has_step_ = false;
  std::thread thread_;
};

// A record released by the tool core after its task completed: scribbled over, so a
// test fails if the engine still read or wrote it.
void Scribble(TaskRecord* t) { std::memset(t->workspan, 0xAB, sizeof t->workspan); }
void Scribble(RegionRecord* r) { std::memset(r->workspan, 0xAB, sizeof r->workspan); }

const void* Site(int n) { return reinterpret_cast<const void*>(uintptr_t{0x401000} + 16 * n); }

const cilkprof::agent::workspan::SiteTotals* FindSite(const cilkprof::agent::workspan::Snapshot& s, const void* pc) {
  for (const auto& t : s.sites) {
    if (t.pc == reinterpret_cast<uintptr_t>(pc)) return &t;
  }
  return nullptr;
}

class OmptWorkSpanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws::Config config;
    config.clock = ws::ClockKind::kCounter;
    config.burden_ticks = kBurden;
    ASSERT_TRUE(ws::Configure(config));
    ws::ResetForTesting();
  }
  // A task's record, kept alive for the whole test (the core's pool).
  TaskRecord* NewTask() {
    tasks_.push_back(std::make_unique<TaskRecord>());
    return tasks_.back().get();
  }
  RegionRecord* NewRegion() {
    regions_.push_back(std::make_unique<RegionRecord>());
    return regions_.back().get();
  }
  std::vector<std::unique_ptr<TaskRecord>> tasks_;
  std::vector<std::unique_ptr<RegionRecord>> regions_;
};

// fib(n) as a task program: two tasks created at one site, a taskwait, one unit of
// work per call after the taskwait and per leaf. Run depth-first on one thread (each
// child switched to at once, as libomp does when it executes a task immediately).
struct FibFigures {
  uint64_t work, span, bspan;
};
FibFigures FibModel(int n) {
  if (n < 2) return {1, 1, 1};
  const FibFigures a = FibModel(n - 1), b = FibModel(n - 2);
  return {a.work + b.work + 1, std::max(a.span, b.span) + 1,
          std::max(kBurden + a.bspan, 2 * kBurden + b.bspan) + 1};
}

uint64_t TaskCount(int n) { return n < 2 ? 0 : 2 + TaskCount(n - 1) + TaskCount(n - 2); }

void RunFib(OmptWorkSpanTest* test, TaskRecord* self, int n, const std::function<TaskRecord*()>& new_task) {
  (void)test;
  if (n < 2) {
    ws::Charge(1);
    return;
  }
  for (int k = 1; k <= 2; ++k) {
    TaskRecord* child = new_task();
    ws::TaskCreate(self, child, Site(1), ompt_task_explicit, false);
    ws::TaskSchedule(self, ompt_task_switch, child);
    RunFib(test, child, n - k, new_task);
    ws::TaskSchedule(child, ompt_task_complete, self);
    Scribble(child);
  }
  ws::SyncRegionBegin(ompt_sync_region_taskwait, self, nullptr);
  ws::SyncRegionWaitBegin(ompt_sync_region_taskwait, self);
  ws::SyncRegionEnd(ompt_sync_region_taskwait, self, nullptr);
  ws::Charge(1);
}

TEST_F(OmptWorkSpanTest, FibTreeWithTaskwait) {
  constexpr int kN = 10;
  TaskRecord* initial = NewTask();
  RegionRecord* region = NewRegion();
  TaskRecord* implicit = NewTask();
  Worker a;
  a.Run([&] {
    ws::ImplicitTaskBegin(nullptr, initial, ompt_task_initial);
    ws::Charge(1000);  // serial code outside any region: not measured
    ws::ParallelBegin(initial, region);
    ws::ImplicitTaskBegin(region, implicit, ompt_task_implicit);
    RunFib(this, implicit, kN, [this] { return NewTask(); });
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, implicit, nullptr);
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, implicit, nullptr);
    ws::ImplicitTaskEnd(implicit);
    ws::ParallelEnd(initial, region);
    ws::Charge(1000);
  });
  const FibFigures fib = FibModel(kN), left = FibModel(kN - 1), right = FibModel(kN - 2);
  const auto s = ws::TakeSnapshot();
  EXPECT_EQ(s.program.work, fib.work);
  EXPECT_EQ(s.program.span, fib.span);
  EXPECT_EQ(s.program.burdened_span, fib.bspan);
  EXPECT_EQ(s.program.computations, 1u);
  const auto* site = FindSite(s, Site(1));
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->kind, cilkprof::agent::workspan::SiteKind::kSpawn);
  EXPECT_EQ(s.program.spawns, TaskCount(kN));
  EXPECT_EQ(site->count, TaskCount(kN));
  EXPECT_EQ(s.program.syncs, TaskCount(kN) / 2 + 1);  // a taskwait per creating call, the region's barrier
  // Top-most: only the root's two children; their subtrees.
  EXPECT_EQ(site->work_on_work, left.work + right.work);
  EXPECT_EQ(site->span_on_work, left.span + right.span);
  EXPECT_EQ(site->burdened_span_on_work, left.bspan + right.bspan);
  // The critical path runs through the root's first child, fib(n - 1), the longer one.
  ASSERT_GT(left.span, right.span);
  EXPECT_EQ(site->work_on_span, left.work);
  EXPECT_EQ(site->span_on_span, left.span);
}


// A team of two implicit tasks, I0 on thread a (also the encountering thread) and I1 on
// thread b, in one top-level region.
struct Team {
  TaskRecord* initial;
  RegionRecord* region;
  TaskRecord* i0;
  TaskRecord* i1;
};

Team Open(OmptWorkSpanTest* t, Worker& a, Worker& b, const std::function<TaskRecord*()>& new_task,
          RegionRecord* region) {
  Team team{new_task(), region, new_task(), new_task()};
  a.Run([&] {
    ws::ImplicitTaskBegin(nullptr, team.initial, ompt_task_initial);
    ws::ParallelBegin(team.initial, team.region);
    ws::ImplicitTaskBegin(team.region, team.i0, ompt_task_implicit);
  });
  b.Run([&] { ws::ImplicitTaskBegin(team.region, team.i1, ompt_task_implicit); });
  (void)t;
  return team;
}

// The region's end as libomp reports it: each implicit task arrives at the implicit
// barrier; the master ends its implicit task and the region; the worker's barrier and
// implicit-task ends come later (at its next fork), after the region's record is gone.
void Close(Worker& a, Worker& b, const Team& team) {
  b.Run([&] { ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr); });
  a.Run([&] {
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
    ws::ImplicitTaskEnd(team.i0);
    ws::ParallelEnd(team.initial, team.region);
  });
  Scribble(team.region);
  b.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr);
    ws::ImplicitTaskEnd(team.i1);
  });
}

// I0 opens a taskgroup and creates C; C (on thread b) creates G and completes without
// waiting; G runs after C completed; the taskgroup's end joins G, a grandchild.
TEST_F(OmptWorkSpanTest, TaskgroupJoinsGrandchildren) {
  Worker a, b;
  auto new_task = [this] { return NewTask(); };
  const Team team = Open(this, a, b, new_task, NewRegion());
  TaskRecord* c = NewTask();
  TaskRecord* g = NewTask();
  a.Run([&] {
    ws::Charge(1);
    ws::SyncRegionBegin(ompt_sync_region_taskgroup, team.i0, nullptr);
    ws::TaskCreate(team.i0, c, Site(1), ompt_task_explicit, false);  // C starts at 1
    ws::Charge(1);                                                   // I0 at 2
    ws::SyncRegionWaitBegin(ompt_sync_region_taskgroup, team.i0);
  });
  b.Run([&] {
    ws::Charge(5);  // I1 at 5
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr);
    ws::TaskSchedule(team.i1, ompt_task_switch, c);
    ws::Charge(2);
    ws::TaskCreate(c, g, Site(2), ompt_task_explicit, false);  // G starts at 3
    ws::Charge(1);
    ws::TaskSchedule(c, ompt_task_complete, g);  // C ends at 4
  });
  Scribble(c);
  b.Run([&] {
    ws::Charge(10);  // G ends at 13
    ws::TaskSchedule(g, ompt_task_complete, team.i1);
  });
  Scribble(g);
  a.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_taskgroup, team.i0, nullptr);  // I0 at 13
    ws::Charge(1);                                                     // 14
  });
  // I1 already arrived at the region's barrier.
  a.Run([&] {
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
    ws::ImplicitTaskEnd(team.i0);
    ws::ParallelEnd(team.initial, team.region);
  });
  b.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr);
    ws::ImplicitTaskEnd(team.i1);
  });
  const auto s = ws::TakeSnapshot();
  EXPECT_EQ(s.program.work, 1u + 1 + 5 + 2 + 1 + 10 + 1);
  EXPECT_EQ(s.program.span, 14u);
  // Burdened: C starts at 1 + B, I0 continues at 2 + B; G at 1 + B + 2 + B; G ends at
  // 13 + 2B, I0 after the group 13 + 2B + 1.
  EXPECT_EQ(s.program.burdened_span, 14u + 2 * kBurden);
  EXPECT_EQ(s.program.spawns, 2u);
  const auto* site_c = FindSite(s, Site(1));
  const auto* site_g = FindSite(s, Site(2));
  ASSERT_NE(site_c, nullptr);
  ASSERT_NE(site_g, nullptr);
  // C's invocation: its own work and its descendant G's; its span from creation (1) to
  // its completion (4), G not joined in it.
  EXPECT_EQ(site_c->count, 1u);
  EXPECT_EQ(site_c->work_on_work, 2u + 1 + 10);
  EXPECT_EQ(site_c->span_on_work, 3u);
  EXPECT_EQ(site_c->burdened_span_on_work, 3u + kBurden);
  EXPECT_EQ(site_g->count, 1u);
  EXPECT_EQ(site_g->work_on_work, 10u);
  EXPECT_EQ(site_g->span_on_work, 10u);
  // The critical path (0 -> 1 in I0, 1 -> 3 in C, 3 -> 13 in G, 13 -> 14 in I0) holds
  // no complete invocation of C (its end, at 4, is off it) and all of G, a grandchild
  // that the taskgroup joined.
  EXPECT_EQ(site_g->work_on_span, 10u);
  EXPECT_EQ(site_g->span_on_span, 10u);
  EXPECT_EQ(site_c->work_on_span, 0u);
  EXPECT_EQ(site_c->span_on_span, 0u);
}

// One thread, one region: its implicit task I creates A (site 1) and C (site 2), then
// waits. A creates A2 (site 1 again: not top-most) and B (site 2, top-most inside A),
// then waits. A's path is the critical path; B lies on it only when it is longer than
// A2. Work units: I 1, A 2, A2 4, B `b_work`, A 1, C 3, I 1.
cilkprof::agent::workspan::Snapshot RunTwoSites(OmptWorkSpanTest* test, const std::function<TaskRecord*()>& new_task,
                                                 const std::function<RegionRecord*()>& new_region, uint64_t b_work) {
  (void)test;
  TaskRecord* initial = new_task();
  RegionRecord* region = new_region();
  TaskRecord* i = new_task();
  TaskRecord* a = new_task();
  TaskRecord* a2 = new_task();
  TaskRecord* b = new_task();
  TaskRecord* c = new_task();
  auto run_child = [](TaskRecord* parent, TaskRecord* child, const void* site, uint64_t work) {
    ws::TaskCreate(parent, child, site, ompt_task_explicit, false);
    ws::TaskSchedule(parent, ompt_task_switch, child);
    ws::Charge(work);
    ws::TaskSchedule(child, ompt_task_complete, parent);
    Scribble(child);
  };
  auto taskwait = [](TaskRecord* t) {
    ws::SyncRegionBegin(ompt_sync_region_taskwait, t, nullptr);
    ws::SyncRegionWaitBegin(ompt_sync_region_taskwait, t);
    ws::SyncRegionEnd(ompt_sync_region_taskwait, t, nullptr);
  };
  Worker w;
  w.Run([&] {
    ws::ImplicitTaskBegin(nullptr, initial, ompt_task_initial);
    ws::ParallelBegin(initial, region);
    ws::ImplicitTaskBegin(region, i, ompt_task_implicit);
    ws::Charge(1);
    ws::TaskCreate(i, a, Site(1), ompt_task_explicit, false);  // A starts at 1
    ws::TaskSchedule(i, ompt_task_switch, a);
    ws::Charge(2);                // A at 3
    run_child(a, a2, Site(1), 4);  // A2: 3 -> 7
    run_child(a, b, Site(2), b_work);
    taskwait(a);
    ws::Charge(1);
    ws::TaskSchedule(a, ompt_task_complete, i);
    Scribble(a);
    run_child(i, c, Site(2), 3);  // C: 1 -> 4
    taskwait(i);
    ws::Charge(1);
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, i, nullptr);
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, i, nullptr);
    ws::ImplicitTaskEnd(i);
    ws::ParallelEnd(initial, region);
  });
  return ws::TakeSnapshot();
}

TEST_F(OmptWorkSpanTest, OnSpanOnlyTheSiteOnTheCriticalPath) {
  // B (3 -> 4) is shorter than A2 (3 -> 7): A joins A2's path, whose profile is empty
  // (A2 is not top-most); A ends at 8 with work 2 + 4 + 1 + 1. C (1 -> 4) is off the
  // path I takes from A (1 -> 8), then I ends at 9.
  const auto s = RunTwoSites(this, [this] { return NewTask(); }, [this] { return NewRegion(); }, 1);
  EXPECT_EQ(s.program.span, 9u);
  EXPECT_EQ(s.program.work, 1u + 2 + 4 + 1 + 1 + 3 + 1);
  const auto* s1 = FindSite(s, Site(1));
  const auto* s2 = FindSite(s, Site(2));
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s1->count, 2u);
  EXPECT_EQ(s1->work_on_work, 8u);  // A only: A2 is a recursive invocation inside it
  EXPECT_EQ(s1->span_on_work, 7u);
  EXPECT_EQ(s1->work_on_span, 8u);
  EXPECT_EQ(s1->span_on_span, 7u);
  EXPECT_EQ(s2->count, 2u);
  EXPECT_EQ(s2->work_on_work, 1u + 3);  // B and C, both top-most
  EXPECT_EQ(s2->span_on_work, 1u + 3);
  EXPECT_EQ(s2->work_on_span, 0u);
  EXPECT_EQ(s2->span_on_span, 0u);
}

TEST_F(OmptWorkSpanTest, OnSpanNestedSiteOnTheCriticalPath) {
  // B (3 -> 8) is longer than A2 (3 -> 7): A joins B's path and ends at 9 with work
  // 2 + 4 + 5 + 1; both A and B (a different site inside it) lie on the critical path,
  // C does not. I ends at 10.
  const auto s = RunTwoSites(this, [this] { return NewTask(); }, [this] { return NewRegion(); }, 5);
  EXPECT_EQ(s.program.span, 10u);
  const auto* s1 = FindSite(s, Site(1));
  const auto* s2 = FindSite(s, Site(2));
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s1->work_on_span, 12u);
  EXPECT_EQ(s1->span_on_span, 8u);
  EXPECT_EQ(s2->work_on_work, 5u + 3);
  EXPECT_EQ(s2->work_on_span, 5u);
  EXPECT_EQ(s2->span_on_span, 5u);
}

// A barrier in the middle of the region joins the task I0 created before it, which
// thread b runs while waiting at the barrier; after it, both implicit tasks continue
// from the join.
TEST_F(OmptWorkSpanTest, BarrierJoinsTheTeamsTasks) {
  Worker a, b;
  auto new_task = [this] { return NewTask(); };
  const Team team = Open(this, a, b, new_task, NewRegion());
  TaskRecord* t = NewTask();
  a.Run([&] {
    ws::Charge(3);
    ws::TaskCreate(team.i0, t, Site(1), ompt_task_explicit, false);  // T starts at 3
    ws::SyncRegionBegin(ompt_sync_region_barrier_explicit, team.i0, nullptr);
  });
  b.Run([&] {
    ws::Charge(7);
    ws::SyncRegionBegin(ompt_sync_region_barrier_explicit, team.i1, nullptr);
    ws::SyncRegionWaitBegin(ompt_sync_region_barrier_explicit, team.i1);
    ws::TaskSchedule(team.i1, ompt_task_switch, t);
    ws::Charge(20);  // T ends at 23
    ws::TaskSchedule(t, ompt_task_complete, team.i1);
  });
  Scribble(t);
  b.Run([&] {
    ws::Charge(1000);  // spinning in the barrier: not work (i1 waits)
    ws::SyncRegionEnd(ompt_sync_region_barrier_explicit, team.i1, nullptr);
    ws::Charge(2);  // 25
  });
  a.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_barrier_explicit, team.i0, nullptr);
    ws::Charge(1);  // 24
  });
  Close(a, b, team);
  const auto s = ws::TakeSnapshot();
  EXPECT_EQ(s.program.work, 3u + 7 + 20 + 2 + 1);
  EXPECT_EQ(s.program.span, 25u);
  EXPECT_EQ(s.program.burdened_span, 25u + kBurden);
  EXPECT_EQ(s.program.computations, 1u);
}

// P, created by I0 and run on thread b, creates Q and completes without waiting: I0's
// taskwait joins P only; Q, run after P's record is gone, is joined by the region's end.
TEST_F(OmptWorkSpanTest, TaskOutlivesItsCreator) {
  Worker a, b;
  auto new_task = [this] { return NewTask(); };
  const Team team = Open(this, a, b, new_task, NewRegion());
  TaskRecord* p = NewTask();
  TaskRecord* q = NewTask();
  a.Run([&] {
    ws::Charge(1);
    ws::TaskCreate(team.i0, p, Site(1), ompt_task_explicit, false);  // P starts at 1
    ws::SyncRegionBegin(ompt_sync_region_taskwait, team.i0, nullptr);
    ws::SyncRegionWaitBegin(ompt_sync_region_taskwait, team.i0);
  });
  b.Run([&] {
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr);
    ws::TaskSchedule(team.i1, ompt_task_switch, p);
    ws::Charge(2);
    ws::TaskCreate(p, q, Site(2), ompt_task_explicit, false);  // Q starts at 3
    ws::Charge(1);
    ws::TaskSchedule(p, ompt_task_complete, team.i1);  // P ends at 4
  });
  Scribble(p);
  a.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_taskwait, team.i0, nullptr);  // I0 at 4
    ws::Charge(1);                                                    // 5
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
    ws::TaskSchedule(team.i0, ompt_task_switch, q);
    ws::Charge(10);  // Q ends at 13
    ws::TaskSchedule(q, ompt_task_complete, team.i0);
  });
  Scribble(q);
  a.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
    ws::ImplicitTaskEnd(team.i0);
    ws::ParallelEnd(team.initial, team.region);
  });
  Scribble(team.region);
  b.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr);
    ws::ImplicitTaskEnd(team.i1);
  });
  const auto s = ws::TakeSnapshot();
  EXPECT_EQ(s.program.work, 1u + 2 + 1 + 1 + 10);
  EXPECT_EQ(s.program.span, 13u);
  EXPECT_EQ(s.program.burdened_span, 13u + 2 * kBurden);
}

// A detachable task D whose event is fulfilled early (omp_fulfill_event on thread a
// while D still runs on thread b): libomp reports task_schedule(D, early_fulfill,
// null) on a, and D's own end later with status complete on b. Only that end
// completes D: its whole strand is work and the taskwait joins it.
TEST_F(OmptWorkSpanTest, EarlyFulfillDoesNotCompleteTheTask) {
  Worker a, b;
  auto new_task = [this] { return NewTask(); };
  const Team team = Open(this, a, b, new_task, NewRegion());
  TaskRecord* d = NewTask();
  a.Run([&] {
    ws::Charge(1);
    ws::TaskCreate(team.i0, d, Site(1), ompt_task_explicit, false);  // D starts at 1
    ws::SyncRegionBegin(ompt_sync_region_taskwait, team.i0, nullptr);
    ws::SyncRegionWaitBegin(ompt_sync_region_taskwait, team.i0);
  });
  b.Run([&] {  // I1 at the region's end barrier runs D
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit, team.i1, nullptr);
    ws::SyncRegionWaitBegin(ompt_sync_region_barrier_implicit, team.i1);
    ws::TaskSchedule(team.i1, ompt_task_switch, d);
    ws::Charge(2);
  });
  a.Run([&] { ws::TaskSchedule(d, ompt_task_early_fulfill, nullptr); });
  b.Run([&] {
    ws::Charge(3);
    ws::TaskSchedule(d, ompt_task_complete, team.i1);  // D ends at 6
  });
  Scribble(d);
  a.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_taskwait, team.i0, nullptr);  // I0 at 6
    ws::Charge(1);                                                    // 7
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit, team.i0, nullptr);
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit, team.i0, nullptr);
    ws::ImplicitTaskEnd(team.i0);
    ws::ParallelEnd(team.initial, team.region);
  });
  Scribble(team.region);
  b.Run([&] {
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit, team.i1, nullptr);
    ws::ImplicitTaskEnd(team.i1);
  });
  const auto s = ws::TakeSnapshot();
  EXPECT_EQ(s.program.work, 1u + 2 + 3 + 1);
  EXPECT_EQ(s.program.span, 7u);
  const auto* site = FindSite(s, Site(1));
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->work_on_work, 5u);
  EXPECT_EQ(site->span_on_work, 5u);
}

// One dag, two schedules: the root creates four tasks (work 4, 9, 2, 6) and waits;
// first they run in creation order on thread a, then in reverse, split between the
// two threads with the waiting thread running some. Same figures both ways.
TEST_F(OmptWorkSpanTest, AnyScheduleSameFigures) {
  const uint64_t kWork[4] = {4, 9, 2, 6};
  for (int schedule = 0; schedule < 2; ++schedule) {
    ws::ResetForTesting();
    Worker a, b;
    auto new_task = [this] { return NewTask(); };
    const Team team = Open(this, a, b, new_task, NewRegion());
    TaskRecord* child[4];
    a.Run([&] {
      for (int k = 0; k < 4; ++k) {
        ws::Charge(1);  // the creator's strand before each creation: children start at 1, 2, 3, 4
        child[k] = NewTask();
        ws::TaskCreate(team.i0, child[k], Site(1), ompt_task_explicit, k == 2);
      }
      ws::SyncRegionBegin(ompt_sync_region_taskwait, team.i0, nullptr);
      ws::SyncRegionWaitBegin(ompt_sync_region_taskwait, team.i0);
    });
    auto run = [&](Worker& w, TaskRecord* host, int k) {
      w.Run([&] {
        ws::TaskSchedule(host, ompt_task_switch, child[k]);
        ws::Charge(kWork[k]);
        ws::TaskSchedule(child[k], ompt_task_complete, host);
      });
      Scribble(child[k]);
    };
    b.Run([&] { ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr); });
    if (schedule == 0) {
      for (int k = 0; k < 4; ++k) run(a, team.i0, k);
    } else {
      run(b, team.i1, 3);
      run(a, team.i0, 2);
      run(b, team.i1, 1);
      run(a, team.i0, 0);
    }
    a.Run([&] {
      ws::SyncRegionEnd(ompt_sync_region_taskwait, team.i0, nullptr);
      ws::Charge(1);
      ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
      ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i0, nullptr);
      ws::ImplicitTaskEnd(team.i0);
      ws::ParallelEnd(team.initial, team.region);
    });
    b.Run([&] {
      ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, team.i1, nullptr);
      ws::ImplicitTaskEnd(team.i1);
    });
    ws::Extra extra;
    const auto s = ws::TakeSnapshot(&extra);
    SCOPED_TRACE(schedule);
    EXPECT_EQ(s.program.work, 4u + 4 + 9 + 2 + 6 + 1);
    // Longest: child 1 (starts at 2, 9 units) ends at 11; then 1 after the taskwait.
    EXPECT_EQ(s.program.span, 12u);
    // Burdened: child k starts at (k + 1) + (k + 1) B; child 3: 4 + 4B + 6 = 10 + 4B;
    // child 1: 2 + 2B + 9 = 11 + 2B; the root continues at 4 + 4B.
    EXPECT_EQ(s.program.burdened_span, std::max(10 + 4 * kBurden, 11 + 2 * kBurden) + 1);
    EXPECT_EQ(extra.tasks, 4u);
    EXPECT_EQ(extra.tasks_with_dependences, 1u);
    const auto* site = FindSite(s, Site(1));
    ASSERT_NE(site, nullptr);
    EXPECT_EQ(site->count, 4u);
    EXPECT_EQ(site->work_on_work, 21u);
    EXPECT_EQ(site->span_on_work, 21u);
    EXPECT_EQ(site->work_on_span, 9u);  // child 1 alone
    EXPECT_EQ(site->span_on_span, 9u);
  }
}

// A nested region opened by an explicit task: its implicit tasks start at the task's
// span, and the task continues from the region's end.
TEST_F(OmptWorkSpanTest, NestedRegionInATask) {
  Worker a, b;
  auto new_task = [this] { return NewTask(); };
  const Team team = Open(this, a, b, new_task, NewRegion());
  TaskRecord* t = NewTask();
  RegionRecord* inner = NewRegion();
  TaskRecord* inner0 = NewTask();
  a.Run([&] {
    ws::Charge(2);
    ws::TaskCreate(team.i0, t, Site(1), ompt_task_explicit, false);  // T at 2
    ws::TaskSchedule(team.i0, ompt_task_switch, t);
    ws::Charge(1);                    // T at 3
    ws::ParallelBegin(t, inner);      // a team of one
    ws::ImplicitTaskBegin(inner, inner0, ompt_task_implicit);
    ws::Charge(30);                   // 33
    ws::SyncRegionBegin(ompt_sync_region_barrier_implicit_parallel, inner0, nullptr);
    ws::SyncRegionEnd(ompt_sync_region_barrier_implicit_parallel, inner0, nullptr);
    ws::ImplicitTaskEnd(inner0);
    ws::ParallelEnd(t, inner);
    ws::Charge(1);  // T ends at 34
    ws::TaskSchedule(t, ompt_task_complete, team.i0);
  });
  b.Run([&] { ws::Charge(8); });
  Close(a, b, team);
  const auto s = ws::TakeSnapshot();
  EXPECT_EQ(s.program.work, 2u + 1 + 30 + 1 + 8);
  EXPECT_EQ(s.program.span, 34u);
  EXPECT_EQ(s.program.computations, 1u);
  const auto* site = FindSite(s, Site(1));
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->work_on_work, 32u);  // T's work, its nested region's included
  EXPECT_EQ(site->span_on_work, 32u);
  EXPECT_EQ(site->work_on_span, 32u);  // T lies on the critical path (I1 ends at 8)
  EXPECT_EQ(site->span_on_span, 32u);
}

}  // namespace
