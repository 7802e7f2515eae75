// Random series-parallel programs for the work/span exactness tests, an interpreter
// that runs them on the Cilk runtime, and an independent reference that runs them
// serially into an explicit dag and measures it (longest paths, critical path,
// per-invocation work and span). The reference shares nothing with the engine.
//
// A program is a set of templates (functions). Each has a cilk::scope (its call site
// is the template's `scope_site`, a made-up pc the test tool substitutes for the real
// one) and a body of statements: charge units, call a template, spawn a child (whose
// body charges and calls), sync, or a region around statements. Calls consume
// `cost` from a budget; a call whose budget would fall below the program's
// `min_budget` is not made and charges `base_units` instead (fib's base case).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace workspan_test {

struct Stmt {
  enum Kind { kCharge, kCall, kSpawn, kSync, kRegion } kind = kCharge;
  uint64_t units = 0;       // kCharge; kCall: base_units
  int target = 0;           // kCall: template
  int cost = 1;             // kCall
  uintptr_t site = 0;       // kSpawn: the spawn site
  int region = 0;           // kRegion: name index ("r0", "r1", ...)
  std::vector<Stmt> body;   // kSpawn: the child; kRegion: the statements inside
};

struct Template {
  uintptr_t scope_site = 0;
  std::vector<Stmt> body;
};

struct Program {
  std::vector<Template> templates;
  int budget = 4;      // of the top-level call of template 0
  int min_budget = 0;
};

Program RandomProgram(uint64_t seed);
// fib(n) as a program: charge 1; spawn { call fib (cost 1) }; charge 1; call fib
// (cost 2); sync. Calls below 2 charge 1 (the base case).
Program FibProgram(int n);

std::string RegionName(int index);

// Call-site key as the engine sees it: (kind 0 call / 1 spawn, pc, parent pc).
using SiteKey = std::tuple<uint32_t, uintptr_t, uintptr_t>;

struct SiteExpect {
  uint64_t count = 0, work_on_work = 0, span_on_work = 0, work_on_span = 0, span_on_span = 0;
  bool operator==(const SiteExpect&) const = default;
};

struct Expected {
  uint64_t work = 0, span = 0, burdened_span = 0, spawns = 0, syncs = 0;
  std::map<SiteKey, SiteExpect> sites;
  // [set][factor]: set 0 = all regions, 1 + r = region r alone (r < regions used).
  std::vector<std::vector<double>> whatif;
};

// The reference: runs `program` serially into a dag and measures it.
Expected Reference(const Program& program, uint64_t burden, int regions, const std::vector<int>& factors);

// Runs `program` on the Cilk runtime (the engine must be installed); the sites the
// hooks see are the program's made-up sites (see the test tool).
void RunOnRuntime(const Program& program);

// The made-up site the next scope entry or spawn on this thread reports.
extern thread_local uintptr_t t_next_site;

}  // namespace workspan_test
