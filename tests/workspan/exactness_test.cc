// Exactness of the work/span engine against an independent reference (sp_program.h):
// random series-parallel programs run on the Cilk runtime with the engine installed
// in-process (this file is the tool: it defines cilkprof_tool_attach), under the
// counter clock, and the whole-program and per-call-site figures must equal the
// reference's exactly. The same tests run with 1 worker, 2 workers, and 2 workers
// with every continuation handed to the other worker (CMakeLists.txt).
#include <cilk/cilk.hpp>
#include <cilkprof/cilkprof.h>
#include <cilkprof/runtime_abi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "sp_program.h"
#include "workspan/engine.h"
#include "workspan/pool.h"

namespace ws = cilkprof::agent::workspan;
using workspan_test::Expected;
using workspan_test::Mode;
using workspan_test::Program;
using workspan_test::SiteExpect;
using workspan_test::SiteKey;

namespace {

const cilkprof_hooks_t* g_engine = nullptr;

// Hooks that report the program's made-up sites instead of the interpreter's pcs.
const void* Take(uintptr_t& next, const void* real) {
  const uintptr_t made_up = next;
  next = 0;
  return made_up != 0 ? reinterpret_cast<const void*>(made_up) : real;
}

const cilkprof_hooks_t kTestHooks = {
    [](cilkprof_frame_t* f, const void* pc, const void* caller) {
      g_engine->scope_enter(f, Take(workspan_test::t_next_site, pc), Take(workspan_test::t_next_caller, caller));
    },
    [](cilkprof_frame_t* f, const void* pc, const void* callable) {
      g_engine->spawn(f, Take(workspan_test::t_next_site, pc), Take(workspan_test::t_next_callable, callable));
    },
    [](cilkprof_frame_t* f) { g_engine->child_end(f); },
    [](cilkprof_frame_t* f) { g_engine->continuation(f); },
    [](cilkprof_frame_t* f, const void* pc) { g_engine->sync_begin(f, pc); },
    [](cilkprof_frame_t* f) { g_engine->sync_end(f); },
    [](cilkprof_frame_t* f) { g_engine->scope_exit(f); },
    nullptr,  // function hooks: the interpreter calls the engine's own (FunctionMode)
    nullptr,
};

// The engine's function hooks, for the interpreter in function mode.
workspan_test::FunctionHooks FunctionMode() { return {g_engine->func_enter, g_engine->func_exit}; }

constexpr int kRegions = 3;
const std::vector<int> kFactors = {2, 4, 8, 16, 32};

void Measure(uint64_t burden, bool strands = false) {
  ws::ResetForTesting();
  ws::EngineConfig config;
  config.clock = ws::ClockKind::kCounter;
  config.burden_ticks = burden;
  config.strands = strands;
  ws::Configure(config);
}

std::map<SiteKey, SiteExpect> EngineSites(const ws::Snapshot& s) {
  std::map<SiteKey, SiteExpect> out;
  for (const ws::SiteTotals& t : s.sites) {
    if (t.count == 0 || t.kind == ws::SiteKind::kStrand) continue;
    SiteExpect& e = out[SiteKey{static_cast<uint32_t>(t.kind), t.pc, t.parent_pc}];
    e.count += t.count;
    e.work_on_work += t.work_on_work;
    e.span_on_work += t.span_on_work;
    e.work_on_span += t.work_on_span;
    e.span_on_span += t.span_on_span;
  }
  return out;
}

std::string Describe(const SiteKey& k, const SiteExpect& e) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s pc=%#lx parent=%#lx count=%lu wow=%lu sow=%lu wos=%lu sos=%lu",
           std::get<0>(k) == 0 ? "call" : "spawn", static_cast<unsigned long>(std::get<1>(k)),
           static_cast<unsigned long>(std::get<2>(k)), static_cast<unsigned long>(e.count),
           static_cast<unsigned long>(e.work_on_work), static_cast<unsigned long>(e.span_on_work),
           static_cast<unsigned long>(e.work_on_span), static_cast<unsigned long>(e.span_on_span));
  return buf;
}

// Runs `program` on the runtime and compares everything with the reference.
// With `strands`, the strand metrics are recorded too: the call-site figures must not
// change, and the strands must partition the work and the critical path exactly.
void ExpectExact(const Program& program, uint64_t burden, const std::string& what, bool strands = false,
                 Mode mode = Mode::kScope) {
  SCOPED_TRACE(what + (mode == Mode::kFunction ? ", function hooks" : ", scope mode"));
  Measure(burden, strands);
  workspan_test::RunOnRuntime(program, mode == Mode::kFunction ? FunctionMode() : workspan_test::FunctionHooks{});
  const ws::Snapshot s = ws::TakeSnapshot();
  ASSERT_FALSE(ws::EngineFailed());
  const Expected e = workspan_test::Reference(program, burden, kRegions, kFactors, mode);
  EXPECT_EQ(s.program.work, e.work);
  EXPECT_EQ(s.program.span, e.span);
  EXPECT_EQ(s.program.burdened_span, e.burdened_span);
  EXPECT_EQ(s.program.spawns, e.spawns);
  EXPECT_EQ(s.program.syncs, e.syncs);
  EXPECT_EQ(s.program.computations, 1u);
  const auto sites = EngineSites(s);
  for (const auto& [key, expect] : e.sites) {
    auto it = sites.find(key);
    if (it == sites.end()) {
      ADD_FAILURE() << "missing site " << Describe(key, expect);
    } else if (!(it->second == expect)) {
      ADD_FAILURE() << "site differs:\n  engine    " << Describe(key, it->second) << "\n  reference "
                    << Describe(key, expect);
    }
  }
  EXPECT_EQ(sites.size(), e.sites.size());
  if (strands) {
    uint64_t work = 0, span = 0, count = 0;
    for (const ws::SiteTotals& t : s.sites) {
      if (t.kind != ws::SiteKind::kStrand) continue;
      count += t.count;
      work += t.work_on_work;
      span += t.span_on_span;
      EXPECT_EQ(t.work_on_work, t.span_on_work);  // a strand is serial
      EXPECT_EQ(t.work_on_span, t.span_on_span);
      EXPECT_LE(t.span_on_span, t.work_on_work);
    }
    EXPECT_EQ(work, e.work) << "the strands' work adds up to the program's";
    EXPECT_EQ(span, e.span) << "the strands on the critical path add up to the span";
    EXPECT_GE(count, 1 + 2 * e.spawns);  // every spawn ends one strand and starts two
  }
  // What-if: the engine numbers regions in the order it first met them.
  for (int set = 0; set <= kRegions; ++set) {
    int engine_set = 0;
    if (set > 0) {
      const std::string name = workspan_test::RegionName(set - 1);
      engine_set = -1;
      for (size_t i = 0; i < s.program.regions.size(); ++i) {
        if (s.program.regions[i] == name) engine_set = static_cast<int>(i) + 1;
      }
      if (engine_set < 0) {
        // Never entered: the variant is the plain span.
        for (size_t f = 0; f < kFactors.size(); ++f) EXPECT_EQ(e.whatif[set][f], static_cast<double>(e.span));
        continue;
      }
    }
    for (size_t f = 0; f < kFactors.size(); ++f) {
      EXPECT_EQ(s.program.whatif_span[engine_set * ws::kFactorCount + static_cast<int>(f)], e.whatif[set][f])
          << "what-if set " << set << " factor " << kFactors[f];
    }
  }
}

}  // namespace

// The runtime attaches at the first scope of the process, after the first test's
// Measure() configured the engine.
extern "C" const cilkprof_hooks_t* cilkprof_tool_attach(const cilkprof_runtime_t* /*runtime*/) {
  if (ws::Hooks() == nullptr) Measure(7);
  g_engine = ws::Hooks();
  return g_engine != nullptr ? &kTestHooks : nullptr;
}

TEST(WorkSpanExactness, RandomSeriesParallelPrograms) {
  const int programs = getenv("WORKSPAN_TEST_PROGRAMS") ? atoi(getenv("WORKSPAN_TEST_PROGRAMS")) : 300;
  uint64_t stolen = 0;
  for (int seed = 1; seed <= programs; ++seed) {
    const Program p = workspan_test::RandomProgram(static_cast<uint64_t>(seed));
    for (Mode mode : {Mode::kScope, Mode::kFunction}) {
      ExpectExact(p, static_cast<uint64_t>(seed % 3 == 0 ? 0 : 5 + seed % 11), "seed " + std::to_string(seed),
                  /*strands=*/seed % 2 == 0, mode);
      stolen += ws::TakeSnapshot().program.stolen_continuations;
      if (HasFailure()) break;
    }
    if (HasFailure()) std::printf("the program:\n%s", workspan_test::Describe(p).c_str());
    if (HasFailure()) break;  // one seed's diagnostics are enough
  }
  // With 2 workers and children that wait for a thief, continuations are stolen
  // while their children run (the merge of views is exercised).
  if (getenv("WORKSPAN_TEST_WAIT_FOR_THIEF") != nullptr) {
    EXPECT_GT(stolen, 0u);
  }
  std::printf("continuations stolen while the child ran: %lu\n", static_cast<unsigned long>(stolen));
}

TEST(WorkSpanExactness, FibRecursionCountsTopMostInvocationsOnce) {
  for (int n : {2, 3, 5, 10, 16}) {
    ExpectExact(workspan_test::FibProgram(n), 3, "fib " + std::to_string(n));
    ExpectExact(workspan_test::FibProgram(n), 3, "fib " + std::to_string(n), false, Mode::kFunction);
  }
  // Top-most totals: the root's call site covers the whole program exactly once, and
  // no site's work-on-work exceeds the program's work (recursion is not re-counted).
  Measure(0);
  const Program fib = workspan_test::FibProgram(14);
  workspan_test::RunOnRuntime(fib);
  const ws::Snapshot s = ws::TakeSnapshot();
  bool saw_root = false;
  for (const ws::SiteTotals& t : s.sites) {
    EXPECT_LE(t.work_on_work, s.program.work);
    EXPECT_LE(t.span_on_span, s.program.span);
    if (t.kind == ws::SiteKind::kCall && t.pc == fib.root_site) {
      saw_root = true;
      EXPECT_EQ(t.count, 1u);
      EXPECT_EQ(t.work_on_work, s.program.work);
      EXPECT_EQ(t.span_on_work, s.program.span);
      EXPECT_EQ(t.work_on_span, s.program.work);
      EXPECT_EQ(t.span_on_span, s.program.span);
    }
  }
  EXPECT_TRUE(saw_root);
}

// A region opened by serial code around a whole computation (cilk::run in main)
// covers all of it: every what-if span of that region is the span divided by the
// factor, and regions never change the work.
TEST(WorkSpanExactness, RegionAroundAWholeComputation) {
  Measure(0);
  {
    cilkprof::region whole("whole");
    workspan_test::RunOnRuntime(workspan_test::FibProgram(12));
  }
  const ws::Snapshot s = ws::TakeSnapshot();
  ASSERT_EQ(s.program.regions.size(), 1u);
  ASSERT_GT(s.program.span, 0u);
  for (int f = 0; f < ws::kFactorCount; ++f) {
    const double expected = static_cast<double>(s.program.span) / ws::kWhatIfFactors[f];
    EXPECT_EQ(s.program.whatif_span[f], expected) << "all regions, factor " << ws::kWhatIfFactors[f];
    EXPECT_EQ(s.program.whatif_span[ws::kFactorCount + f], expected) << "region 'whole' alone";
  }
  // After the region ends, a computation is outside it again.
  Measure(0);
  workspan_test::RunOnRuntime(workspan_test::FibProgram(8));
  const ws::Snapshot after = ws::TakeSnapshot();
  EXPECT_EQ(after.program.whatif_span[0], static_cast<double>(after.program.span));
}

// Memory grows with call sites times depth, never with the number of spawns: a scope
// spawning many children in a loop (every continuation stolen under forced steals).
TEST(WorkSpanExactness, MemoryDoesNotGrowWithSpawns) {
  auto loop = [](long n) {
    Measure(0);
    cilk::scope s;
    for (long i = 0; i < n; ++i) {
      s.spawn([] { cilkprof_charge(3); });
      cilkprof_charge(1);
    }
  };
  loop(2000);
  const uint64_t warm = ws::TotalPoolBytes();
  loop(40000);
  const uint64_t after = ws::TotalPoolBytes();
  EXPECT_LE(after - warm, uint64_t{4} << 20) << "pools grew from " << warm << " to " << after << " bytes";
  const ws::Snapshot snapshot = ws::TakeSnapshot();
  EXPECT_EQ(snapshot.program.work, 40000u * 4);
  EXPECT_EQ(snapshot.program.spawns, 40000u);
}

// Strand metrics on a program whose strands are known: each strand's executions,
// work and share of the critical path, exactly (any worker count, forced steals).
namespace {
void OneSpawn() {
  cilk::scope s;
  cilkprof_charge(1);                         // enter -> spawn
  s.spawn([] { cilkprof_charge(10); });       // spawn -> child_end: on the critical path
  cilkprof_charge(2);                         // continue -> sync: beside the child
  s.sync();
  cilkprof_charge(3);                         // sync_end -> exit
}
}  // namespace

TEST(WorkSpanExactness, StrandsOfAKnownProgram) {
  Measure(0, /*strands=*/true);
  OneSpawn();
  OneSpawn();
  const ws::Snapshot s = ws::TakeSnapshot();
  ASSERT_FALSE(ws::EngineFailed());
  EXPECT_EQ(s.program.work, 2u * 16);
  EXPECT_EQ(s.program.span, 2u * 14);
  using P = ws::StrandPoint;
  struct Want {
    P start, end;
    uint64_t work, span;
  };
  const Want want[] = {{P::kEnter, P::kSpawn, 2, 2},
                       {P::kSpawn, P::kChildEnd, 20, 20},
                       {P::kContinue, P::kSync, 4, 0},
                       {P::kSyncEnd, P::kExit, 6, 6}};
  for (const Want& w : want) {
    int found = 0;
    for (const ws::SiteTotals& t : s.sites) {
      if (t.kind != ws::SiteKind::kStrand || t.start != w.start || t.end != w.end) continue;
      ++found;
      EXPECT_EQ(t.count, 2u) << ws::StrandPointName(w.start) << " -> " << ws::StrandPointName(w.end);
      EXPECT_EQ(t.work_on_work, w.work) << ws::StrandPointName(w.start) << " -> " << ws::StrandPointName(w.end);
      EXPECT_EQ(t.span_on_span, w.span) << ws::StrandPointName(w.start) << " -> " << ws::StrandPointName(w.end);
    }
    EXPECT_EQ(found, 1) << ws::StrandPointName(w.start) << " -> " << ws::StrandPointName(w.end);
  }
}
