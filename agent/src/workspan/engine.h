// The work/span engine: computes, online and with every worker running, the work and
// span of a Cilk computation and, per call site, the Cilkprof metrics (work-on-work,
// span-on-work, work-on-span, span-on-span of the top-most invocations), optionally
// the same per strand (EngineConfig::strands), plus the burdened span and the causal
// what-if spans of annotated regions. Design, models and definitions: docs/WORKSPAN.md.
//
// Units: "ticks" of the configured clock (TSC ticks, ns, or charged units); the
// report converts them (see clock.h).
//
// Contract:
//  - Configure() once before the runtime calls any hook (AttachHooks does it).
//  - The hooks (Hooks()) follow cilkprof/runtime_abi.h; they keep their state in the
//    frame's tool_data[0] and in initial-exec thread-local state; they never call
//    malloc, never take a lock the program could hold and never block (the only
//    locks are the tool's own, off the spawn path: a pool depot spin lock once per
//    64 blocks, a global spin lock when a top-level computation ends or a region
//    name is first seen).
//  - Memory: per live Cilk frame and per live spawned child one record, plus span
//    profiles bounded by the number of call sites (and distinct strands); never per
//    spawn.
//  - Snapshot() may run at any time on any thread; totals of computations still
//    running are not included in the whole-program figures and on-span values (they
//    are added when the top-level computation ends); on-work values are added when
//    each invocation ends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent::workspan {

enum class ClockKind : uint32_t { kTsc = 0, kMonotonic = 1, kCounter = 2 };

// What-if factors and the number of distinct region names analysed (later names are
// counted in `regions_dropped` and treated as code outside regions).
inline constexpr int kWhatIfFactors[] = {2, 4, 8, 16, 32};
inline constexpr int kFactorCount = 5;
inline constexpr int kMaxRegions = 8;
// Variant v = set * kFactorCount + f, set 0 = all regions, set 1 + r = region r alone.
inline constexpr int kVariants = kFactorCount * (1 + kMaxRegions);

struct EngineConfig {
  ClockKind clock = ClockKind::kTsc;
  uint64_t burden_ticks = 15000;  // per spawn, on the child and on the continuation
  // Per-strand metrics (the thesis' strand profile). Off by default: every strand
  // boundary then also costs a table lookup and an entry in the span profiles.
  bool strands = false;
  // An address inside the runtime library (e.g. a function of its hook table's
  // runtime view): code there that calls the user's (the child trampoline calling a
  // spawned callable) is part of a spawn, never a call site. Null: none known.
  const void* runtime_code = nullptr;
};

// Call sites (docs/WORKSPAN.md "Call sites"): a call is keyed by the call instruction
// in the caller (the called function's return address), whatever called through it; a
// spawn by its spawn point. Calls made by a spawned callable itself belong to the spawn.
enum class SiteKind : uint32_t { kCall = 0, kSpawn = 1, kStrand = 2 };

// Where a strand starts or ends: the hook at that point and its code address.
//   enter     a cilk::scope entered (address: the scope's entry), or, with function
//             hooks, a function entered (its return address)
//   spawn     a spawn (the spawn point); a spawned child's strand starts here
//   child_end a spawned child ended (its spawn point)
//   continue  the continuation after a spawn resumed (the spawn point)
//   sync      a cilk_sync began (the sync's address); sync_end: it ended
//   exit      a cilk::scope ended (the scope's entry); return: the enclosing code
//             resumed after it (or after a function with hooks returned: its return
//             address)
//   region    a cilkprof::region began or ended (the caller's address)
enum class StrandPoint : uint8_t {
  kNone = 0, kEnter, kSpawn, kChildEnd, kContinue, kSync, kSyncEnd, kExit, kReturn, kRegion,
};
inline constexpr int kStrandPoints = 10;
const char* StrandPointName(StrandPoint point);

struct SiteTotals {
  SiteKind kind = SiteKind::kCall;
  uintptr_t pc = 0;         // the call's return address in the caller (call), spawn
                            // point (spawn), the start point's address (strand)
  uintptr_t parent_pc = 0;  // the end point's address (strands); 0 otherwise
  StrandPoint start = StrandPoint::kNone, end = StrandPoint::kNone;  // strands only
  // The callee, as an address whose byte before lies in it (like a return address):
  // call: the first scope entered through it or the called function's entry + 1;
  // spawn: the same for the function the spawned callable calls; 0 if none seen.
  uintptr_t callee_pc = 0;
  uint64_t count = 0;       // invocations, recursive ones included
  uint64_t work_on_work = 0, span_on_work = 0;  // top-most invocations
  uint64_t burdened_span_on_work = 0;            // top-most invocations, burdened spans
  uint64_t work_on_span = 0, span_on_span = 0;  // top-most invocations on the critical path
};

struct ProgramTotals {
  uint64_t work = 0, span = 0, burdened_span = 0;
  uint64_t spawns = 0, syncs = 0;
  uint64_t computations = 0;  // top-level computations ended
  uint64_t stolen_continuations = 0;  // continuations resumed while their child still ran
  double whatif_span[kVariants] = {};
  std::vector<std::string> regions;  // names, by region index
  uint64_t regions_dropped = 0;      // begins of names beyond kMaxRegions
  uint64_t sites_dropped = 0;        // invocations of sites beyond the table's capacity
  uint64_t tasks_with_dependences = 0;  // OpenMP tasks with depend clauses (ompt_workspan.h)
};

struct Snapshot {
  ProgramTotals program;
  std::vector<SiteTotals> sites;  // by site id - 1; ids only grow
};

void Configure(const EngineConfig& config);
const EngineConfig& Config();
const cilkprof_hooks_t* Hooks();

// The program API (cilkprof/cilkprof.h).
void Charge(uint64_t units);
// `callsite`: the program's call (a strand boundary's address, for strand metrics).
void RegionBegin(const char* name, const void* callsite);
void RegionEnd(const void* callsite);

Snapshot TakeSnapshot();

// True once the engine ran out of memory: hooks stopped, figures are partial.
bool EngineFailed();

// Called (outside any engine lock) on the thread that ends a top-level computation,
// after its totals joined the whole-program figures. Set before the first hook.
void SetTopLevelEndCallback(void (*callback)());

// fork(): the prepare handler holds the engine's global locks across the fork, so a
// child never inherits one held by a thread that does not exist there.
void LockForFork();
void UnlockAfterFork();

// Tests only, with no computation running: forget everything measured so far.
void ResetForTesting();

}  // namespace cilkprof::agent::workspan
