// Random series-parallel programs for the work/span exactness tests, an interpreter
// that runs them on the Cilk runtime, and an independent reference that runs them
// serially into an explicit dag and measures it (longest paths, critical path,
// per-invocation work and span). The reference shares nothing with the engine.
//
// A program is a set of templates (functions). A template has statements run before
// its scope opens (`pre`: charges and calls), and, unless it is serial, a
// cilk::scope (its entry is the template's made-up `scope_site`) with a body of
// statements: charge units, call a template, spawn a child (whose body charges and
// calls), sync, or a region around statements. Each call statement has its own
// made-up call site (the return address the test tool reports). Calls consume `cost`
// from a budget; a call whose budget would fall below the program's `min_budget` is
// not made and charges `base_units` instead (fib's base case).
//
// Two modes, as the engine has them (docs/WORKSPAN.md "Call sites"):
//   scope mode     only the runtime's hooks: a template's invocation runs from its
//                  scope's entry to its exit (its `pre` belongs to its caller; a
//                  serial template is invisible, its statements are its caller's);
//   function mode  function hooks too (-finstrument-functions): a template's
//                  invocation runs from its entry to its exit, serial ones included.
// A spawn whose callable calls templates itself (`direct`; always in function mode,
// where the callable is instrumented) makes those calls part of the spawn: they are
// not call sites.
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
  uintptr_t site = 0;       // kSpawn: the spawn site; kCall: the call site (return address)
  bool direct = false;      // kSpawn: the callable makes the body's calls itself
  int region = 0;           // kRegion: name index ("r0", "r1", ...)
  std::vector<Stmt> body;   // kSpawn: the child; kRegion: the statements inside
};

struct Template {
  uintptr_t scope_site = 0;
  uintptr_t function = 0;   // its made-up entry address (function mode)
  bool has_scope = true;
  std::vector<Stmt> pre;    // before the scope opens (charges, calls, regions of those)
  std::vector<Stmt> body;   // inside the scope
};

struct Program {
  std::vector<Template> templates;
  int budget = 4;      // of the top-level call of template 0
  int min_budget = 0;
  uintptr_t root_site = 0x100;  // the call site of the top-level call
};

enum class Mode { kScope, kFunction };

Program RandomProgram(uint64_t seed);
// The program as text, for failure messages.
std::string Describe(const Program& program);
// The call sites the interpreter's own code has when a real agent profiles it (the
// end-to-end tests): every call statement is the one call instruction in ExecBody,
// and no spawned callable calls a template itself (it calls ExecBody, which does).
Program AsInterpreted(Program program);
// fib(n) as a program: charge 1; spawn { call fib (cost 1) }; charge 1; call fib
// (cost 2); sync. Calls below 2 charge 1 (the base case).
Program FibProgram(int n);

std::string RegionName(int index);

// Call-site key as the engine sees it: (kind 0 call / 1 spawn, pc, parent pc): a
// call's pc is its call site, a spawn's its spawn point; parent pc is 0 for both.
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
Expected Reference(const Program& program, uint64_t burden, int regions, const std::vector<int>& factors,
                   Mode mode = Mode::kScope);

// The function hooks the interpreter calls in function mode (the test tool's: the
// engine's func_enter and func_exit).
using FunctionHook = void (*)(const void* function, const void* caller);
struct FunctionHooks {
  FunctionHook enter = nullptr, exit = nullptr;
};

// Runs `program` on the Cilk runtime (the engine must be installed); the sites the
// hooks see are the program's made-up sites (see the test tool). Function mode when
// `functions` has hooks.
void RunOnRuntime(const Program& program, FunctionHooks functions = {});

// What the next scope entry or spawn on this thread reports instead of the real
// addresses: the scope's or spawn's site, the scope's caller (its call site), the
// spawn's callable.
extern thread_local uintptr_t t_next_site;
extern thread_local uintptr_t t_next_caller;
extern thread_local uintptr_t t_next_callable;

// A real function: the callable a `direct` spawn reports, and the call site its calls
// report lies inside it (the engine finds its entry in the unwind tables).
void DirectCallable();
uintptr_t DirectCallSite();

}  // namespace workspan_test
