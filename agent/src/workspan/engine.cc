// The work/span engine (engine.h). The model, in the terms of docs/WORKSPAN.md:
//
// Contexts. Every cilk::scope instance is a frame context (FrameCtx, in the frame's
// tool_data[0]); every spawned child is a child context (ChildCtx) from its spawn to
// its end. A context's parent is the context whose strand entered it. A thread runs
// at most one strand at a time: ThreadState::cur is that strand's context (null
// between strands), ThreadState::start the clock when it (re)started.
//
// Accumulators (Accum) are Cilkscale's per-frame state: work; the continuation path
// (contin_*: span, burdened span, what-if spans, span profile) since the frame's last
// sync; and the longest path ending at a completed child (lchild_*), both measured
// from the accumulator's start. A child context is serial and uses only contin_*.
//
// Views. A frame's continuation writes into its current view. When a thief resumes
// the continuation while the child still runs, the thief closes the current view
// (which keeps that running child as its `pending_child`) and starts a new, empty
// view to the right, so the two never write the same memory. A child's end only
// publishes its result (`done`, a release store); whoever runs the frame's
// continuation folds finished children into their views and combines adjacent views
// (the reducer merge: L.contin + R.lchild competes with L.lchild, continuations add),
// at its next hook for that frame and at the sync. The view chain is therefore only
// ever touched by the thread running the frame's strand: no lock and no atomic
// read-modify-write anywhere on the spawn path, and only views whose child still runs
// stay apart, so their number is bounded by running children, never by spawns.
//
// The continuation that follows its child's end on the same thread (the usual case)
// knows so from the thread's previous hook and reuses that hook's clock reading.
//
// Call sites. A call site is the call instruction in the caller: a frame's site is
// keyed by the return address of the function holding its scope (scope mode), or a
// function context's by its return address (function hooks, -finstrument-functions:
// FuncCtx, a serial context per instrumented function invocation). The calls a
// spawned callable makes itself belong to its spawn (ClassifyEntry), and so do the
// scopes of a function invocation that has its own context (no site of their own).
#include "workspan/engine.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

#include <atomic>
#include <cstring>
#include <new>

#include "function_entry.h"
#include "instrumentation.h"
#include "monotonic_clock.h"
#include "workspan/pool.h"
#include "workspan/profile.h"

namespace cilkprof::agent::workspan {
namespace {

EngineConfig g_config;
void (*g_top_level_end)() = nullptr;
std::atomic<bool> g_failed{false};  // out of memory once: hooks stop, figures flagged

class SpinLock {
 public:
  void lock() {
    while (word_.exchange(1, std::memory_order_acquire) != 0) {
      while (word_.load(std::memory_order_relaxed) != 0) __builtin_ia32_pause();
    }
  }
  void unlock() { word_.store(0, std::memory_order_release); }

 private:
  std::atomic<uint32_t> word_{0};
};

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// ---------------------------------------------------------------------------------
// Call sites: a lock-free open-addressing table from (kind, pc, parent pc) to a dense
// id. Id 0 means "not tracked" (the table is full).

constexpr uint32_t kMaxSites = 1u << 16;
// Interned kinds: SiteKind::kCall, kSpawn, and for strands kStrandKindBase +
// start point * kStrandPoints + end point.
constexpr uint32_t kStrandKindBase = 2;
constexpr uint32_t kSlots = 1u << 17;
constexpr uint64_t kClaimed = 1;

struct Slot {
  std::atomic<uint64_t> tag;  // 0 empty, 1 being filled, else the key's hash | 2
  uint32_t id;
  uint32_t kind;
  uintptr_t pc, parent_pc;
};

struct SiteInfo {
  std::atomic<uint32_t> ready;
  uint32_t kind;
  uintptr_t pc, parent_pc;
  std::atomic<uintptr_t> callee_pc;
  // Calls: the entry of the function holding the call instruction (0 if unknown), and
  // whether that is runtime code (the child trampoline). Set before `ready`.
  uintptr_t caller_entry;
  bool caller_in_runtime;
};

// The function that holds a code address (function_entry.h), and whether it is the
// runtime's code (the child trampoline).
const void* g_runtime_map = nullptr;  // the runtime library's link map

uintptr_t FunctionEntryOf(uintptr_t address, bool* in_runtime) {
  const FunctionEntry found = agent::FunctionEntryOf(address);
  *in_runtime = g_runtime_map != nullptr && found.link_map == g_runtime_map;
  return found.entry;
}

Slot* g_slots = nullptr;
SiteInfo* g_sites = nullptr;
std::atomic<uint32_t> g_next_site{1};
std::atomic<uint64_t> g_sites_dropped{0};

uint64_t HashKey(uint32_t kind, uintptr_t pc, uintptr_t parent) {
  uint64_t h = pc * 0x9E3779B97F4A7C15ull;
  h ^= (parent + 0x632BE59BD9B4E019ull + kind) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return h;
}

uint32_t InternSite(uint32_t kind, uintptr_t pc, uintptr_t parent) {
  const uint64_t h = HashKey(kind, pc, parent);
  const uint64_t tag = h | 2;
  for (uint32_t i = static_cast<uint32_t>(h) & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
    Slot& slot = g_slots[i];
    uint64_t t = slot.tag.load(std::memory_order_acquire);
    if (t == 0) {
      if (g_next_site.load(std::memory_order_relaxed) >= kMaxSites) return 0;
      uint64_t expected = 0;
      if (slot.tag.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
        uint32_t id = g_next_site.fetch_add(1, std::memory_order_relaxed);
        if (id >= kMaxSites) id = 0;
        slot.id = id;
        slot.kind = kind;
        slot.pc = pc;
        slot.parent_pc = parent;
        if (id != 0) {
          SiteInfo& info = g_sites[id];
          info.kind = kind;
          info.pc = pc;
          info.parent_pc = parent;
          info.callee_pc.store(0, std::memory_order_relaxed);
          info.caller_entry = 0;
          info.caller_in_runtime = false;
          if (kind == static_cast<uint32_t>(SiteKind::kCall) && pc != 0) {
            // A return address: the byte before it is the call instruction.
            info.caller_entry = FunctionEntryOf(pc - 1, &info.caller_in_runtime);
          }
          info.ready.store(1, std::memory_order_release);
        }
        slot.tag.store(tag, std::memory_order_release);
        return id;
      }
      t = expected;
    }
    while (t == kClaimed) {
      __builtin_ia32_pause();
      t = slot.tag.load(std::memory_order_acquire);
    }
    if (t == tag && slot.kind == kind && slot.pc == pc && slot.parent_pc == parent) return slot.id;
  }
}

// ---------------------------------------------------------------------------------
// Per-thread state.

struct OnWork {
  std::atomic<uint64_t> count, work, span, burdened_span;
};
constexpr uint32_t kPageSites = 256;
constexpr uint32_t kPages = kMaxSites / kPageSites;
constexpr uint32_t kCacheEntries = 64;

struct Ctx;

enum : uint64_t { kAdjacentChildEnd = 1, kAdjacentSyncBegin = 2, kAdjacentSyncEnd = 3 };

struct ThreadState {
  Ctx* cur = nullptr;
  uint64_t start = 0;
  // Where the running strand started (strand metrics).
  uintptr_t start_pc = 0;
  StrandPoint start_point = StrandPoint::kNone;
  // The previous hook on this thread, when it may be followed at once by the hook
  // that resumes the same strand (child_end -> continuation of the same spawn,
  // sync_begin -> sync_end of the same frame): that hook reuses its clock reading.
  const void* adjacent = nullptr;
  uint64_t adjacent_now = 0;
  uint64_t adjacent_kind = 0;  // kAdjacentChildEnd, kAdjacentSyncBegin, kAdjacentSyncEnd
  // Regions opened by serial code outside any computation (e.g. around a cilk::run
  // in main): the next top-level frame entered on this thread inherits them.
  int8_t outer_region = -1;
  bool outer_owned = false;
  uint32_t outer_depth = 0, outer_owner_depth = 0;
  // The counter clock: units charged on this thread. Atomic (relaxed) because the
  // thread ending a top-level computation's sync may read the entering thread's.
  std::atomic<uint64_t> counter{0};
  Pool pool;
  std::atomic<uint64_t> spawns{0}, syncs{0}, stolen{0};
  std::atomic<OnWork*> pages[kPages] = {};
  struct CacheEntry {
    uintptr_t pc, parent;
    uint32_t kind, id;
  } cache[kCacheEntries] = {};
  uint32_t cache_generation = 0;
  ThreadState* next_registered = nullptr;
};

__thread ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<ThreadState*> g_threads{nullptr};
std::atomic<uint32_t> g_cache_generation{0};

ThreadState* CreateState() {
  void* memory = MapZeroed(sizeof(ThreadState));
  if (memory == nullptr) return nullptr;
  auto* ts = new (memory) ThreadState();
  ts->cache_generation = g_cache_generation.load(std::memory_order_acquire);
  ThreadState* head = g_threads.load(std::memory_order_relaxed);
  do {
    ts->next_registered = head;
  } while (!g_threads.compare_exchange_weak(head, ts, std::memory_order_release, std::memory_order_relaxed));
  tls_state = ts;
  return ts;
}

inline ThreadState* State() {
  ThreadState* ts = tls_state;
  return ts != nullptr ? ts : CreateState();
}

inline uint64_t Now(const ThreadState& ts) {
  switch (g_config.clock) {
    case ClockKind::kTsc:
      return __rdtsc();
    case ClockKind::kCounter:
      return ts.counter.load(std::memory_order_relaxed);
    case ClockKind::kMonotonic:
      break;
  }
  return MonotonicNs();
}

[[gnu::always_inline]] inline uint32_t LookupSite(ThreadState& ts, uint32_t kind, uintptr_t pc, uintptr_t parent) {
  const uint32_t generation = g_cache_generation.load(std::memory_order_relaxed);
  if (ts.cache_generation != generation) {
    std::memset(static_cast<void*>(ts.cache), 0, sizeof ts.cache);
    ts.cache_generation = generation;
  }
  auto& e = ts.cache[(HashKey(kind, pc, parent) >> 7) & (kCacheEntries - 1)];
  if (e.id != 0 && e.pc == pc && e.parent == parent && e.kind == kind) return e.id;
  const uint32_t id = InternSite(kind, pc, parent);
  if (id != 0) e = {pc, parent, kind, id};
  return id;
}

void Fail() { g_failed.store(true, std::memory_order_relaxed); }

inline void RelaxedAdd(std::atomic<uint64_t>& a, uint64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

[[gnu::always_inline]] inline void RecordOnWork(ThreadState& ts, uint32_t site, uint64_t work, uint64_t span,
                                                uint64_t burdened_span, bool topmost) {
  OnWork* page = ts.pages[site / kPageSites].load(std::memory_order_relaxed);
  if (page == nullptr) {
    page = static_cast<OnWork*>(ts.pool.Allocate(sizeof(OnWork) * kPageSites));
    if (page == nullptr) return Fail();
    std::memset(static_cast<void*>(page), 0, sizeof(OnWork) * kPageSites);
    ts.pages[site / kPageSites].store(page, std::memory_order_release);
  }
  OnWork& w = page[site % kPageSites];
  RelaxedAdd(w.count, 1);
  if (topmost) {
    RelaxedAdd(w.work, work);
    RelaxedAdd(w.span, span);
    RelaxedAdd(w.burdened_span, burdened_span);
  }
}

// ---------------------------------------------------------------------------------
// Accumulators.

struct WhatIf {
  double contin[kVariants];
  double lchild[kVariants];
};

struct Accum {
  uint64_t work = 0;
  uint64_t contin_span = 0, lchild_span = 0;
  uint64_t contin_bspan = 0, lchild_bspan = 0;
  bool has_lchild = false;
  WhatIf* whatif = nullptr;  // null: every variant equals the unburdened span
  Profile contin_prof, lchild_prof;
  // A closed view (not its frame's current one): the child of its last spawn, still
  // to be folded in; null once folded.
  struct ChildCtx* pending_child = nullptr;
  Accum* next = nullptr;
}; 

// Makes a's what-if spans explicit; call before changing a's spans.
WhatIf* EnsureWhatIf(ThreadState& ts, Accum& a) {
  if (a.whatif != nullptr) return a.whatif;
  auto* w = static_cast<WhatIf*>(ts.pool.Allocate(sizeof(WhatIf)));
  if (w == nullptr) {
    Fail();
    return nullptr;
  }
  const double c = static_cast<double>(a.contin_span);
  const double l = a.has_lchild ? static_cast<double>(a.lchild_span) : 0.0;
  for (int v = 0; v < kVariants; ++v) {
    w->contin[v] = c;
    w->lchild[v] = l;
  }
  a.whatif = w;
  return w;
}

inline double ContinVariant(const Accum& a, int v) {
  return a.whatif != nullptr ? a.whatif->contin[v] : static_cast<double>(a.contin_span);
}
inline double LchildVariant(const Accum& a, int v) {
  if (a.whatif != nullptr) return a.whatif->lchild[v];
  return a.has_lchild ? static_cast<double>(a.lchild_span) : 0.0;
}

inline void ReleaseAccumMemory(ThreadState& ts, Accum& a) {
  a.contin_prof.Clear(ts.pool);
  a.lchild_prof.Clear(ts.pool);
  ts.pool.Free(a.whatif);
  a.whatif = nullptr;
}

// A strand of `t` ticks in region `region` (-1: none) appended to a's continuation.
[[gnu::noinline]] void AddStrandWhatIf(ThreadState& ts, Accum& a, uint64_t t, int region) {
  WhatIf* w = EnsureWhatIf(ts, a);
  if (w == nullptr) return;
  const double whole = static_cast<double>(t);
  for (int f = 0; f < kFactorCount; ++f) {
    const double scaled = whole / kWhatIfFactors[f];
    w->contin[f] += region >= 0 ? scaled : whole;
    for (int r = 0; r < kMaxRegions; ++r) w->contin[(1 + r) * kFactorCount + f] += r == region ? scaled : whole;
  }
}

inline void AddStrand(ThreadState& ts, Accum& a, uint64_t t, int region) {
  if (__builtin_expect(region >= 0 || a.whatif != nullptr, 0)) AddStrandWhatIf(ts, a, t, region);
  a.work += t;
  a.contin_span += t;
  a.contin_bspan += t;
}

// A called invocation's final state (synced: no lchild) appended in series; consumes
// `callee`'s memory.
[[gnu::always_inline]] inline void FoldCall(ThreadState& ts, Accum& into, Accum& callee) {
  if (callee.whatif != nullptr || into.whatif != nullptr) {
    WhatIf* w = EnsureWhatIf(ts, into);
    if (w != nullptr) {
      for (int v = 0; v < kVariants; ++v) w->contin[v] += ContinVariant(callee, v);
    }
  }
  into.work += callee.work;
  into.contin_span += callee.contin_span;
  into.contin_bspan += callee.contin_bspan;
  if (!into.contin_prof.Absorb(ts.pool, callee.contin_prof)) Fail();
  ReleaseAccumMemory(ts, callee);
}

// A spawned child's final state (serial: contin only) joined to the view that spawned
// it: the path through the child competes with the view's longest child path.
// The continuation burden was added to `view` at the spawn, so the view's burdened
// continuation already includes the child path's burden too.
[[gnu::always_inline]] inline void FoldChild(ThreadState& ts, Accum& view, Accum& child) {
  if (child.whatif != nullptr || view.whatif != nullptr) {
    WhatIf* w = EnsureWhatIf(ts, view);
    if (w != nullptr) {
      for (int v = 0; v < kVariants; ++v) {
        const double candidate = w->contin[v] + ContinVariant(child, v);
        if (candidate > w->lchild[v]) w->lchild[v] = candidate;
      }
    }
  }
  view.work += child.work;
  const uint64_t candidate = view.contin_span + child.contin_span;
  if (!view.has_lchild || candidate > view.lchild_span) {
    view.lchild_span = candidate;
    view.has_lchild = true;
    if (!view.lchild_prof.CopyFrom(ts.pool, view.contin_prof) || !view.lchild_prof.Absorb(ts.pool, child.contin_prof)) {
      Fail();
    }
  }
  const uint64_t burdened = view.contin_bspan + child.contin_bspan;
  if (burdened > view.lchild_bspan) view.lchild_bspan = burdened;
  ReleaseAccumMemory(ts, child);
}

// left = left followed by right (adjacent views of one frame, same sync epoch).
// Consumes right's memory.
void Combine(ThreadState& ts, Accum& left, Accum& right) {
  if (left.whatif != nullptr || right.whatif != nullptr) {
    WhatIf* w = EnsureWhatIf(ts, left);
    if (w != nullptr) {
      for (int v = 0; v < kVariants; ++v) {
        if (right.has_lchild) {
          const double candidate = w->contin[v] + LchildVariant(right, v);
          if (candidate > w->lchild[v]) w->lchild[v] = candidate;
        }
        w->contin[v] += ContinVariant(right, v);
      }
    }
  }
  left.work += right.work;
  if (right.has_lchild) {
    const uint64_t candidate = left.contin_span + right.lchild_span;
    if (!left.has_lchild || candidate > left.lchild_span) {
      left.lchild_span = candidate;
      left.has_lchild = true;
      if (!left.lchild_prof.CopyFrom(ts.pool, left.contin_prof) ||
          !left.lchild_prof.Absorb(ts.pool, right.lchild_prof)) {
        Fail();
      }
    }
    const uint64_t burdened = left.contin_bspan + right.lchild_bspan;
    if (burdened > left.lchild_bspan) left.lchild_bspan = burdened;
  }
  left.contin_span += right.contin_span;
  left.contin_bspan += right.contin_bspan;
  if (!left.contin_prof.Absorb(ts.pool, right.contin_prof)) Fail();
  ReleaseAccumMemory(ts, right);
}

// cilk_sync: the longest of the continuation and the child paths becomes the
// continuation (ties keep the continuation).
void SyncAccum(Accum& a) {
  if (a.whatif != nullptr) {
    for (int v = 0; v < kVariants; ++v) {
      if (a.whatif->lchild[v] > a.whatif->contin[v]) a.whatif->contin[v] = a.whatif->lchild[v];
      a.whatif->lchild[v] = 0.0;
    }
  }
  if (a.has_lchild && a.lchild_span > a.contin_span) {
    a.contin_span = a.lchild_span;
    a.contin_prof.Swap(a.lchild_prof);
  }
  a.lchild_prof.Reset();  // keeps the block for the next sync epoch
  a.has_lchild = false;
  a.lchild_span = 0;
  if (a.lchild_bspan > a.contin_bspan) a.contin_bspan = a.lchild_bspan;
  a.lchild_bspan = 0;
}

// ---------------------------------------------------------------------------------
// Contexts.

enum class CtxKind : uint8_t { kFrame, kChild, kFunc };

struct Ctx {
  CtxKind kind;
  bool topmost;
  bool dropped;            // site 0 because the site table is full (else: no site of its own)
  bool region_owned;       // this context opened the region it is in
  int8_t region;           // the outermost open region (inherited or own), -1 none
  uint32_t region_depth;   // region_begin calls on this context not yet ended
  uint32_t region_owner_depth;
  uint32_t site;
  uintptr_t pc;
  // The distinct sites of this context and its ancestors, when at most kActiveInline;
  // beyond that `active_overflow` and a site not listed needs a walk up the parents.
  static constexpr int kActiveInline = 6;
  uint32_t active[kActiveInline];
  uint8_t active_count;
  bool active_overflow;
  Ctx* parent;
};

struct FrameCtx;

// A serial context: a spawned child, or a function invocation (function hooks).
struct SerialCtx : Ctx {
  Accum acc;
};

// An instrumented function's invocation, from its entry to its exit.
struct FuncCtx : SerialCtx {
  uintptr_t function;  // its entry address
  uintptr_t ret;       // its return address (the call site)
  // Entered directly by a spawned callable, or the callable itself: the calls it makes
  // belong to the spawn.
  bool spawn_body;
};

struct ChildCtx : SerialCtx {
  uintptr_t callable;  // the function the runtime called on the child's fiber
  Accum* spawn_view;
  FrameCtx* frame;
  std::atomic<bool> done;  // its child_end has happened (release)
  ThreadState* ended_on;   // written before `done`
};

struct FrameCtx : Ctx {
  uintptr_t ret;       // the return address of the function holding the scope
  uintptr_t function;  // that function's entry when it has a context (function hooks), else 0
  Accum base;
  Accum* view;
  ChildCtx* last_child;  // of the latest spawn, until its continuation
  ThreadState* origin;  // top-level frames: the thread that entered the runtime
  ThreadState* synced_on;  // the thread of the last sync_begin (see ThreadState::adjacent)
  bool trivial_sync;       // the sync in progress has no child to wait for
  uintptr_t spawn_pc;      // the latest spawn point (strand metrics: its continuation)
  uintptr_t sync_pc;       // the latest non-trivial sync's address (strand metrics)
  // The record of one child, reused spawn after spawn while each child is folded
  // before the next spawn (no steal): saves a pool block per spawn.
  bool embedded_busy;
  // Raw storage: constructed by OnSpawn when used, so entering a scope does not
  // initialize a child record it may never need.
  alignas(ChildCtx) unsigned char embedded_storage[sizeof(ChildCtx)];
  ChildCtx* embedded() { return reinterpret_cast<ChildCtx*>(embedded_storage); }
};

ChildCtx* NewChild(ThreadState& ts, FrameCtx* f) {
  if (!f->embedded_busy) {
    f->embedded_busy = true;
    return f->embedded();
  }
  return static_cast<ChildCtx*>(ts.pool.Allocate(sizeof(ChildCtx)));
}

void FreeChild(ThreadState& ts, ChildCtx* c) {
  if (c == c->frame->embedded()) {
    c->frame->embedded_busy = false;
  } else {
    ts.pool.Free(c);
  }
}

inline Accum& CurrentAccum(Ctx* c) {
  return c->kind == CtxKind::kFrame ? *static_cast<FrameCtx*>(c)->view : static_cast<SerialCtx*>(c)->acc;
}

[[gnu::always_inline]] inline void InitCtx(Ctx* c, CtxKind kind, uint32_t site, uintptr_t pc, Ctx* parent,
                                           bool dropped = false) {
  c->kind = kind;
  c->site = site;
  c->dropped = dropped;
  c->pc = pc;
  c->parent = parent;
  c->region = parent != nullptr ? parent->region : -1;
  c->region_owned = false;
  c->region_depth = 0;
  c->region_owner_depth = 0;
  // Top-most: no ancestor invocation of the same site (recursion counts once).
  bool active = false;
  if (parent != nullptr) {
    std::memcpy(c->active, parent->active, sizeof c->active);
    c->active_count = parent->active_count;
    c->active_overflow = parent->active_overflow;
    for (int i = 0; i < c->active_count; ++i) active = active || c->active[i] == site;
    if (!active && c->active_overflow && site != 0) {  // (a context with no site has none to find)
      for (const Ctx* q = parent; q != nullptr && !active; q = q->parent) active = q->site == site;
    }
  } else {
    c->active_count = 0;
    c->active_overflow = false;
  }
  c->topmost = site != 0 && !active;
  if (c->topmost) {
    if (c->active_count < Ctx::kActiveInline) {
      c->active[c->active_count++] = site;
    } else {
      c->active_overflow = true;
    }
  }
}

// The invocation of `c` has ended with `a` (synced): on-work record, and its own entry
// in its span profile when it is the top-most invocation of its site.
[[gnu::always_inline]] inline void FinishInvocation(ThreadState& ts, const Ctx* c, Accum& a) {
  if (c->site == 0) {
    if (c->dropped) g_sites_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  RecordOnWork(ts, c->site, a.work, a.contin_span, a.contin_bspan, c->topmost);
  if (c->topmost && !a.contin_prof.Add(ts.pool, c->site, a.work, a.contin_span)) Fail();
}

// Strand metrics: the strand from the thread's start point to `end` is one more
// execution of the strand (start, end): count and work, and an entry in the span
// profile of the path it lies on (its share of the critical path).
[[gnu::noinline]] void RecordStrand(ThreadState& ts, Accum& a, uint64_t t, StrandPoint end, uintptr_t end_pc) {
  const uint32_t kind = kStrandKindBase + static_cast<uint32_t>(ts.start_point) * kStrandPoints +
                        static_cast<uint32_t>(end);
  const uint32_t id = LookupSite(ts, kind, ts.start_pc, end_pc);
  if (id == 0) {
    g_sites_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  RecordOnWork(ts, id, t, t, t, /*topmost=*/true);
  if (!a.contin_prof.Add(ts.pool, id, t, t)) Fail();
}

// Ends the running strand at `end` (address end_pc) and charges it to c.
inline void ChargeStrand(ThreadState& ts, Ctx* c, uint64_t now, StrandPoint end, uintptr_t end_pc) {
  const uint64_t t = now - ts.start;
  Accum& a = CurrentAccum(c);
  AddStrand(ts, a, t, c->region);
  if (__builtin_expect(g_config.strands, false)) RecordStrand(ts, a, t, end, end_pc);
}

inline void StartStrand(ThreadState& ts, uint64_t now, StrandPoint point, uintptr_t pc) {
  ts.start = now;
  ts.start_point = point;
  ts.start_pc = pc;
}

// Folds a finished child into the view it was spawned from (the view has not grown
// since: it is either still the current view, right after that spawn, or closed at
// it). Frees the child.
void FoldFinishedChild(ThreadState& ts, ChildCtx* c) {
  FoldChild(ts, *c->spawn_view, c->acc);
  FreeChild(ts, c);
}

// Folds the finished pending children of closed views and combines every view whose
// child has been folded with the view to its right. Only the thread running the
// frame's strand calls this. With `all_done` (at the sync) every child has ended.
void CollapseViews(ThreadState& ts, FrameCtx* f, bool all_done) {
  Accum* x = &f->base;
  while (x->next != nullptr) {
    ChildCtx* c = x->pending_child;
    if (c != nullptr && (all_done || c->done.load(std::memory_order_acquire))) {
      FoldFinishedChild(ts, c);
      x->pending_child = c = nullptr;
    }
    if (c != nullptr) {
      x = x->next;
      continue;
    }
    Accum* right = x->next;
    Combine(ts, *x, *right);
    x->pending_child = right->pending_child;
    if (x->pending_child != nullptr) x->pending_child->spawn_view = x;  // read by the folder only
    x->next = right->next;
    if (f->view == right) f->view = x;
    ts.pool.Free(right);
  }
}

// ---------------------------------------------------------------------------------
// The whole program: top-level computations in series.

struct ProgramState {
  SpinLock lock;
  uint64_t work = 0, span = 0, burdened_span = 0, computations = 0;
  double whatif[kVariants] = {};
  // On-span values per site id, grown as needed (top-level ends only: not a hot path).
  uint64_t* on_span = nullptr;  // [2 * capacity]: work, span
  uint32_t capacity = 0;
};
ProgramState g_program;

struct RegionTable {
  SpinLock lock;
  std::atomic<uint32_t> count{0};
  char names[kMaxRegions][64] = {};
  std::atomic<uint64_t> dropped{0};
};
RegionTable g_regions;

void FoldRoot(ThreadState& ts, Accum& a) {
  ProgramState& p = g_program;
  p.lock.lock();
  p.work += a.work;
  p.span += a.contin_span;
  p.burdened_span += a.contin_bspan;
  p.computations += 1;
  for (int v = 0; v < kVariants; ++v) p.whatif[v] += ContinVariant(a, v);
  const uint32_t sites = g_next_site.load(std::memory_order_relaxed);
  if (p.capacity < sites && a.contin_prof.size() != 0) {
    uint32_t capacity = p.capacity == 0 ? 1024 : p.capacity;
    while (capacity < sites) capacity *= 2;
    if (capacity > kMaxSites) capacity = kMaxSites;
    auto* grown = static_cast<uint64_t*>(MapZeroed(sizeof(uint64_t) * 2 * capacity));
    if (grown == nullptr) {
      Fail();
    } else {
      if (p.on_span != nullptr) {
        std::memcpy(grown, p.on_span, sizeof(uint64_t) * 2 * p.capacity);
        munmap(p.on_span, sizeof(uint64_t) * 2 * p.capacity);
      }
      p.on_span = grown;
      p.capacity = capacity;
    }
  }
  for (const ProfileEntry& e : a.contin_prof) {
    if (e.site < p.capacity) {
      p.on_span[2 * e.site] += e.work;
      p.on_span[2 * e.site + 1] += e.span;
    }
  }
  p.lock.unlock();
  ReleaseAccumMemory(ts, a);
}

// ---------------------------------------------------------------------------------
// The hooks.

inline bool Off() { return g_failed.load(std::memory_order_relaxed); }

// Records `callee` (an address whose byte before lies in the callee) as the site's
// callee, the first one seen.
inline void NoteCallee(uint32_t site, uintptr_t callee) {
  if (site == 0) return;
  std::atomic<uintptr_t>& slot = g_sites[site].callee_pc;
  if (slot.load(std::memory_order_relaxed) == 0) {
    uintptr_t expected = 0;
    slot.compare_exchange_strong(expected, callee, std::memory_order_relaxed);
  }
}

// How a scope or function entered from `parent` through the call site `site` (0: the
// table is full) relates to the call sites.
struct Entry {
  uint32_t site = 0;       // its own call site, or 0
  bool dropped = false;    // it should have one but the table is full
  bool spawn_body = false; // the spawned callable itself (function hooks)
};

// `function`: the entered function's entry (function hooks; never one inlined into the
// running context, which OnFuncEnter leaves out first: InlinedInto), or 0 for a scope.
// `spawn_callee`: the callee to record on the spawn the entry belongs to.
Entry ClassifyEntry(ThreadState& ts, Ctx* parent, uintptr_t ret, uintptr_t function, uintptr_t spawn_callee) {
  Entry e;
  if (parent != nullptr && parent->kind == CtxKind::kFunc) {
    auto* caller = static_cast<FuncCtx*>(parent);
    // A scope with the enclosing function's return address is that invocation's own.
    if (function == 0 && caller->ret == ret) return e;
    if (caller->spawn_body) {  // a call the spawned callable makes: part of its spawn
      NoteCallee(caller->parent->site, spawn_callee);
      return e;
    }
  }
  const uint32_t site = LookupSite(ts, static_cast<uint32_t>(SiteKind::kCall), ret, 0);
  if (parent != nullptr && parent->kind == CtxKind::kChild) {
    auto* child = static_cast<ChildCtx*>(parent);
    const bool trampoline = site != 0 && g_sites[site].caller_in_runtime;
    if ((function != 0 && function == child->callable) || trampoline) {
      // The runtime called it on the child's fiber: the callable itself (or code the
      // compiler inlined into it).
      e.spawn_body = function != 0;
      if (function == 0 || function != child->callable) NoteCallee(child->site, spawn_callee);
      return e;
    }
    if (site != 0 && g_sites[site].caller_entry != 0 && g_sites[site].caller_entry == child->callable) {
      NoteCallee(child->site, spawn_callee);  // called by the callable: part of the spawn
      return e;
    }
  }
  e.site = site;
  e.dropped = site == 0;
  NoteCallee(site, spawn_callee);
  return e;
}

// Function contexts still open above `target` on this thread (functions an exception
// left without their exit hook, as clang's instrumentation does) end now, innermost
// first. Nothing happens unless `target` is reached from the running context
// through function contexts only.
void EndFunctionsAbove(ThreadState& ts, Ctx* target, uint64_t now);

// The same, for a hook of frame `f` that reads the clock later (only when some are open).
inline void EndFunctionsAboveFrame(ThreadState& ts, FrameCtx* f) {
  if (ts.cur != f && ts.cur != nullptr && ts.cur->kind == CtxKind::kFunc) EndFunctionsAbove(ts, f, Now(ts));
}

void OnScopeEnter(cilkprof_frame_t* frame, const void* callsite, const void* caller) {
  frame->tool_data[0] = nullptr;
  if (Off()) return;
  ThreadState* ts = State();
  if (ts == nullptr) return Fail();
  const uint64_t now = Now(*ts);  // one reading: ends the parent's strand, starts ours
  ts->adjacent = nullptr;
  Ctx* parent = ts->cur;
  const auto pc = reinterpret_cast<uintptr_t>(callsite);
  if (parent != nullptr) ChargeStrand(*ts, parent, now, StrandPoint::kEnter, pc);
  auto* f = static_cast<FrameCtx*>(ts->pool.Allocate(sizeof(FrameCtx)));
  if (f == nullptr) return Fail();
  new (f) FrameCtx;  // default-init: InitCtx and the lines below set every field read later
  const auto ret = reinterpret_cast<uintptr_t>(caller);
  const Entry entry = ClassifyEntry(*ts, parent, ret, 0, pc);
  InitCtx(f, CtxKind::kFrame, entry.site, pc, parent, entry.dropped);
  f->ret = ret;
  f->function = parent != nullptr && parent->kind == CtxKind::kFunc && static_cast<FuncCtx*>(parent)->ret == ret
                    ? static_cast<FuncCtx*>(parent)->function
                    : 0;
  if (parent == nullptr) f->region = ts->outer_region;
  f->view = &f->base;
  f->last_child = nullptr;
  f->trivial_sync = false;
  f->embedded_busy = false;
  f->origin = parent == nullptr ? ts : nullptr;
  frame->tool_data[0] = f;
  ts->cur = f;
  StartStrand(*ts, now, StrandPoint::kEnter, pc);
}

void OnSpawn(cilkprof_frame_t* frame, const void* callsite, const void* callable) {
  auto* f = static_cast<FrameCtx*>(frame->tool_data[0]);
  if (f == nullptr || Off()) return;
  ThreadState* ts = State();
  const uint64_t now = Now(*ts);
  ts->adjacent = nullptr;
  if (ts->cur != f) EndFunctionsAbove(*ts, f, now);
  const auto pc = reinterpret_cast<uintptr_t>(callsite);
  ChargeStrand(*ts, f, now, StrandPoint::kSpawn, pc);
  f->spawn_pc = pc;
  if (f->base.next != nullptr) CollapseViews(*ts, f, false);  // may change f->view
  Accum* view = f->view;
  view->contin_bspan += g_config.burden_ticks;
  RelaxedAdd(ts->spawns, 1);
  ChildCtx* c = NewChild(*ts, f);
  if (c == nullptr) return Fail();
  new (c) ChildCtx;  // default-init: InitCtx and the lines below set every field read later
  const uint32_t site = LookupSite(*ts, static_cast<uint32_t>(SiteKind::kSpawn), pc, 0);
  InitCtx(c, CtxKind::kChild, site, pc, f, /*dropped=*/site == 0);
  c->callable = reinterpret_cast<uintptr_t>(callable);
  c->spawn_view = view;
  c->frame = f;
  c->done.store(false, std::memory_order_relaxed);
  c->ended_on = nullptr;
  // Seen by a thief through the runtime's deque push (release) and steal (acquire).
  f->last_child = c;

  ts->cur = c;
  StartStrand(*ts, now, StrandPoint::kSpawn, pc);
}

void OnChildEnd(cilkprof_frame_t* frame) {
  auto* f = static_cast<FrameCtx*>(frame->tool_data[0]);
  if (f == nullptr || Off()) return;
  ThreadState* ts = State();
  const uint64_t now = Now(*ts);
  Ctx* cur = ts->cur;
  if (cur != nullptr && cur->kind == CtxKind::kFunc) {
    Ctx* below = cur;
    while (below != nullptr && below->kind == CtxKind::kFunc) below = below->parent;
    EndFunctionsAbove(*ts, below, now);
    cur = ts->cur;
  }
  if (cur == nullptr || cur->kind != CtxKind::kChild || static_cast<ChildCtx*>(cur)->frame != f) return Fail();
  auto* c = static_cast<ChildCtx*>(cur);
  ChargeStrand(*ts, c, now, StrandPoint::kChildEnd, c->pc);
  FinishInvocation(*ts, c, c->acc);
  c->ended_on = ts;
  ts->cur = nullptr;
  ts->adjacent = c;
  ts->adjacent_now = now;
  ts->adjacent_kind = kAdjacentChildEnd;
  // Publishes the child's result; the frame's strand folds it (OnContinuation,
  // CollapseViews). Nothing here may touch c afterwards.
  c->done.store(true, std::memory_order_release);
}

void OnContinuation(cilkprof_frame_t* frame) {
  auto* f = static_cast<FrameCtx*>(frame->tool_data[0]);
  if (f == nullptr || Off()) return;
  ThreadState* ts = State();
  ChildCtx* c = f->last_child;
  f->last_child = nullptr;
  uint64_t now;
  if (c == nullptr) {
    now = Now(*ts);
  } else if (c->done.load(std::memory_order_acquire)) {
    // The child has ended: fold it into the view it came from, still the current one.
    // Right after its end on this thread (the usual case) that hook's clock reading
    // starts the continuation.
    now = c->ended_on == ts && ts->adjacent == c && ts->adjacent_kind == kAdjacentChildEnd ? ts->adjacent_now : Now(*ts);
    FoldFinishedChild(*ts, c);
  } else {
    // Stolen while the child runs: close the current view with the child pending and
    // continue in a new view to its right.
    now = Now(*ts);
    RelaxedAdd(ts->stolen, 1);
    auto* v = static_cast<Accum*>(ts->pool.Allocate(sizeof(Accum)));
    if (v == nullptr) return Fail();
    new (v) Accum();
    f->view->pending_child = c;
    f->view->next = v;
    f->view = v;
  }
  if (f->base.next != nullptr) CollapseViews(*ts, f, false);
  ts->adjacent = nullptr;
  ts->cur = f;
  StartStrand(*ts, now, StrandPoint::kContinue, f->spawn_pc);
}

void OnSyncBegin(cilkprof_frame_t* frame, const void* callsite) {
  auto* f = static_cast<FrameCtx*>(frame->tool_data[0]);
  if (f == nullptr || Off()) return;
  ThreadState* ts = State();
  EndFunctionsAboveFrame(*ts, f);
  if (f->last_child == nullptr && f->view == &f->base && f->base.next == nullptr && !f->base.has_lchild &&
      (f->origin == nullptr || f->origin == ts)) {
    // No child since the last sync (a scope's implicit sync after an explicit one,
    // a scope without spawns): nothing to join, no wait, the strand goes on here.
    RelaxedAdd(ts->syncs, 1);
    f->trivial_sync = true;
    ts->adjacent = nullptr;
    return;
  }
  const uint64_t now = Now(*ts);
  f->sync_pc = reinterpret_cast<uintptr_t>(callsite);
  ChargeStrand(*ts, f, now, StrandPoint::kSync, f->sync_pc);
  RelaxedAdd(ts->syncs, 1);
  ts->cur = nullptr;  // the strand may park here and resume on another worker
  ts->adjacent = f;
  ts->adjacent_now = now;
  ts->adjacent_kind = kAdjacentSyncBegin;
  f->synced_on = ts;
}

void OnSyncEnd(cilkprof_frame_t* frame) {
  auto* f = static_cast<FrameCtx*>(frame->tool_data[0]);
  if (f == nullptr || Off()) return;
  if (f->trivial_sync) {
    f->trivial_sync = false;
    return;
  }
  ThreadState* ts = State();
  // No wait at the sync (the usual case): the sync_begin reading starts the strand.
  const uint64_t now = ts->adjacent == f && ts->adjacent_kind == kAdjacentSyncBegin && f->synced_on == ts
                           ? ts->adjacent_now
                           : Now(*ts);
  ts->adjacent = nullptr;
  if (f->base.next != nullptr) CollapseViews(*ts, f, /*all_done=*/true);
  f->view = &f->base;
  SyncAccum(f->base);
  ts->cur = f;
  StartStrand(*ts, now, StrandPoint::kSyncEnd, f->sync_pc);
  // A scope's end syncs first: scope_exit follows at once and reuses this reading.
  ts->adjacent = f;
  ts->adjacent_now = now;
  ts->adjacent_kind = kAdjacentSyncEnd;
  if (f->origin != nullptr && f->origin != ts) {
    // A top-level frame synced on another worker: after an explicit sync the runtime
    // hands the strand back to the entering thread without a hook (docs/RUNTIME.md,
    // kReturnToOrigin). Nothing else runs now (every child has ended), so the
    // entering thread is idle: make it continue this strand from now on. (If the
    // scope ends instead, scope_exit runs here and undoes this.)
    ThreadState* origin = f->origin;
    origin->cur = f;
    StartStrand(*origin, Now(*origin), StrandPoint::kSyncEnd, f->sync_pc);
  }
}

void OnScopeExit(cilkprof_frame_t* frame) {
  auto* f = static_cast<FrameCtx*>(frame->tool_data[0]);
  if (f == nullptr || Off()) return;
  frame->tool_data[0] = nullptr;
  ThreadState* ts = State();
  EndFunctionsAboveFrame(*ts, f);
  // Right after this frame's sync_end on this thread (always, unless the program
  // charged units in between): that reading is the end of the strand.
  const uint64_t now = ts->adjacent == f && ts->adjacent_kind == kAdjacentSyncEnd && ts->cur == f &&
                               g_config.clock != ClockKind::kCounter
                           ? ts->adjacent_now
                           : Now(*ts);
  ts->adjacent = nullptr;
  const uintptr_t scope_pc = f->pc;
  ChargeStrand(*ts, f, now, StrandPoint::kExit, scope_pc);
  FinishInvocation(*ts, f, f->base);
  Ctx* parent = f->parent;
  if (parent != nullptr) {
    FoldCall(*ts, CurrentAccum(parent), f->base);
  } else {
    FoldRoot(*ts, f->base);
  }
  if (f->origin != nullptr && f->origin != ts) f->origin->cur = nullptr;
  ts->pool.Free(f);
  ts->cur = parent;
  if (parent == nullptr && g_top_level_end != nullptr) {
    g_top_level_end();
    StartStrand(*ts, Now(*ts), StrandPoint::kReturn, scope_pc);  // sending is not the parent's work
  } else {
    StartStrand(*ts, now, StrandPoint::kReturn, scope_pc);
  }
}

// ---- Function hooks (code compiled with -finstrument-functions). ----
// Only functions entered inside a computation (a context is running on this thread)
// get a context; an exit pairs with the innermost open function context with the same
// entry and return address, so exits of functions entered outside are ignored.

// Ends the running function context `f` (its strand already charged): its invocation
// is recorded and folded into the context that called it.
void EndFunction(ThreadState& ts, FuncCtx* f) {
  Ctx* parent = f->parent;
  Accum& into = CurrentAccum(parent);
  Accum& a = f->acc;
  if (a.contin_prof.empty() && a.whatif == nullptr && into.whatif == nullptr) {
    // The usual case, a function that called no top-most site: its own entry goes
    // straight into the caller's span profile (what FinishInvocation + FoldCall would
    // leave there, without a profile block of its own).
    if (f->site != 0) {
      RecordOnWork(ts, f->site, a.work, a.contin_span, a.contin_bspan, f->topmost);
      if (f->topmost && !into.contin_prof.Add(ts.pool, f->site, a.work, a.contin_span)) Fail();
    } else if (f->dropped) {
      g_sites_dropped.fetch_add(1, std::memory_order_relaxed);
    }
    into.work += a.work;
    into.contin_span += a.contin_span;
    into.contin_bspan += a.contin_bspan;
  } else {
    FinishInvocation(ts, f, a);
    FoldCall(ts, into, a);
  }
  ts.pool.Free(f);
  ts.cur = parent;
}

void EndFunctionsAbove(ThreadState& ts, Ctx* target, uint64_t now) {
  for (Ctx* q = ts.cur; q != target; q = q->parent) {
    if (q == nullptr || q->kind != CtxKind::kFunc) return;
  }
  if (ts.cur == target) return;
  ChargeStrand(ts, ts.cur, now, StrandPoint::kExit, static_cast<FuncCtx*>(ts.cur)->ret);
  uintptr_t ret = 0;
  while (ts.cur != target) {
    auto* f = static_cast<FuncCtx*>(ts.cur);
    ret = f->ret;
    EndFunction(ts, f);
  }
  StartStrand(ts, now, StrandPoint::kReturn, ret);
}

// A function hook with the return address of the running context's function but for
// another function: GCC instruments inlined functions too, and reports the return
// address of the function they were inlined into. Such a function is part of that
// one: its enter and exit (both seen with the same running context) do nothing, with
// no clock reading and no context (most hooks of GCC-built code are these).
inline bool InlinedInto(const Ctx* cur, uintptr_t ret, uintptr_t function) {
  if (cur->kind == CtxKind::kFunc) {
    const auto* f = static_cast<const FuncCtx*>(cur);
    return f->ret == ret && f->function != function;
  }
  if (cur->kind == CtxKind::kFrame) {
    const auto* frame = static_cast<const FrameCtx*>(cur);
    return frame->ret == ret && (frame->function == 0 || frame->function != function);
  }
  return false;
}

void OnFuncEnter(const void* function, const void* caller) {
  ThreadState* ts = tls_state;  // a thread with no state has no computation running
  if (ts == nullptr || ts->cur == nullptr || Off()) return;
  Ctx* parent = ts->cur;
  const auto ret = reinterpret_cast<uintptr_t>(caller);
  const auto entry_pc = reinterpret_cast<uintptr_t>(function);
  if (InlinedInto(parent, ret, entry_pc)) {
    // Inlined into the spawned callable: the function it calls, for the spawn's row.
    if (parent->kind == CtxKind::kFunc && static_cast<FuncCtx*>(parent)->spawn_body) {
      NoteCallee(parent->parent->site, entry_pc + 1);
    }
    return;
  }
  const uint64_t now = Now(*ts);
  ts->adjacent = nullptr;
  ChargeStrand(*ts, parent, now, StrandPoint::kEnter, ret);
  auto* f = static_cast<FuncCtx*>(ts->pool.Allocate(sizeof(FuncCtx)));
  if (f == nullptr) return Fail();
  new (f) FuncCtx;  // default-init: InitCtx and the lines below set every field read later
  // The callee is named by its entry; +1 makes it read like a return address.
  const Entry entry = ClassifyEntry(*ts, parent, ret, entry_pc, entry_pc + 1);
  InitCtx(f, CtxKind::kFunc, entry.site, ret, parent, entry.dropped);
  f->function = entry_pc;
  f->ret = ret;
  f->spawn_body = entry.spawn_body;
  ts->cur = f;
  StartStrand(*ts, now, StrandPoint::kEnter, ret);
}

void OnFuncExit(const void* function, const void* caller) {
  ThreadState* ts = tls_state;
  if (ts == nullptr || Off()) return;
  const auto ret = reinterpret_cast<uintptr_t>(caller);
  const auto entry_pc = reinterpret_cast<uintptr_t>(function);
  Ctx* match = ts->cur;
  if (match == nullptr || InlinedInto(match, ret, entry_pc)) return;
  // The matching context: the running one, or one below functions an exception left
  // without their exit hook.
  while (match != nullptr && match->kind == CtxKind::kFunc &&
         !(static_cast<FuncCtx*>(match)->function == entry_pc && static_cast<FuncCtx*>(match)->ret == ret)) {
    match = match->parent;
  }
  if (match == nullptr || match->kind != CtxKind::kFunc) return;  // entered outside a computation
  const uint64_t now = Now(*ts);
  ts->adjacent = nullptr;
  EndFunctionsAbove(*ts, match, now);
  ChargeStrand(*ts, match, now, StrandPoint::kExit, ret);
  EndFunction(*ts, static_cast<FuncCtx*>(match));
  StartStrand(*ts, now, StrandPoint::kReturn, ret);
}

// Every hook runs marked as the tool's code, so that a sample taken in it (or in what
// it calls: the clock, libc, the pool, the send at the end of a computation) is
// `instrumentation`, never the program's work, overhead or idleness (instrumentation.h).
const cilkprof_hooks_t kHooks = {
    &InstrumentedCall<&OnScopeEnter>::Call,   &InstrumentedCall<&OnSpawn>::Call,
    &InstrumentedCall<&OnChildEnd>::Call,     &InstrumentedCall<&OnContinuation>::Call,
    &InstrumentedCall<&OnSyncBegin>::Call,    &InstrumentedCall<&OnSyncEnd>::Call,
    &InstrumentedCall<&OnScopeExit>::Call,    &InstrumentedCall<&OnFuncEnter>::Call,
    &InstrumentedCall<&OnFuncExit>::Call,
};

int RegionIndex(const char* name) {
  if (name == nullptr) name = "";
  RegionTable& t = g_regions;
  uint32_t n = t.count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i) {
    if (std::strncmp(t.names[i], name, sizeof t.names[i] - 1) == 0) return static_cast<int>(i);
  }
  t.lock.lock();
  n = t.count.load(std::memory_order_relaxed);
  int found = -1;
  for (uint32_t i = 0; i < n && found < 0; ++i) {
    if (std::strncmp(t.names[i], name, sizeof t.names[i] - 1) == 0) found = static_cast<int>(i);
  }
  if (found < 0 && n < kMaxRegions) {
    std::strncpy(t.names[n], name, sizeof t.names[n] - 1);
    t.count.store(n + 1, std::memory_order_release);
    found = static_cast<int>(n);
  }
  t.lock.unlock();
  return found;
}

}  // namespace

void Configure(const EngineConfig& config) {
  g_config = config;
  g_runtime_map = nullptr;
  dl_find_object runtime;
  if (config.runtime_code != nullptr && _dl_find_object(const_cast<void*>(config.runtime_code), &runtime) == 0) {
    g_runtime_map = runtime.dlfo_link_map;
  }
  if (g_slots == nullptr) {
    g_slots = static_cast<Slot*>(MapZeroed(sizeof(Slot) * kSlots));
    g_sites = static_cast<SiteInfo*>(MapZeroed(sizeof(SiteInfo) * kMaxSites));
    if (g_slots == nullptr || g_sites == nullptr) Fail();
  }
}

const EngineConfig& Config() { return g_config; }

const char* StrandPointName(StrandPoint point) {
  switch (point) {
    case StrandPoint::kNone: break;
    case StrandPoint::kEnter: return "enter";
    case StrandPoint::kSpawn: return "spawn";
    case StrandPoint::kChildEnd: return "child_end";
    case StrandPoint::kContinue: return "continue";
    case StrandPoint::kSync: return "sync";
    case StrandPoint::kSyncEnd: return "sync_end";
    case StrandPoint::kExit: return "exit";
    case StrandPoint::kReturn: return "return";
    case StrandPoint::kRegion: return "region";
  }
  return "start";
}

bool EngineFailed() { return g_failed.load(std::memory_order_relaxed); }

void SetTopLevelEndCallback(void (*callback)()) { g_top_level_end = callback; }

const cilkprof_hooks_t* Hooks() { return g_slots != nullptr && g_sites != nullptr ? &kHooks : nullptr; }

void Charge(uint64_t units) {
  if (g_config.clock != ClockKind::kCounter) return;
  ThreadState* ts = State();
  if (ts != nullptr) ts->counter.store(ts->counter.load(std::memory_order_relaxed) + units, std::memory_order_relaxed);
}

namespace {

// Region nesting on one context (or on a thread's serial code): the outermost region
// counts; the context that opened it closes it when its own nesting unwinds.
void OpenRegion(int8_t* region, bool* owned, uint32_t* depth, uint32_t* owner_depth, int index) {
  ++*depth;
  if (*region < 0 && index >= 0) {
    *region = static_cast<int8_t>(index);
    *owned = true;
    *owner_depth = *depth;
  }
}

void CloseRegion(int8_t* region, bool* owned, uint32_t* depth, const uint32_t* owner_depth) {
  if (*owned && *owner_depth == *depth) {
    *region = -1;
    *owned = false;
  }
  --*depth;
}

}  // namespace

void RegionBegin(const char* name, const void* callsite) {
  if (Off()) return;
  ThreadState* ts = State();
  if (ts == nullptr) return;
  const int index = RegionIndex(name);
  if (index < 0) g_regions.dropped.fetch_add(1, std::memory_order_relaxed);
  Ctx* c = ts->cur;
  if (c == nullptr) {  // serial code outside any computation
    OpenRegion(&ts->outer_region, &ts->outer_owned, &ts->outer_depth, &ts->outer_owner_depth, index);
    return;
  }
  const uint64_t now = Now(*ts);
  ts->adjacent = nullptr;
  const auto pc = reinterpret_cast<uintptr_t>(callsite);
  ChargeStrand(*ts, c, now, StrandPoint::kRegion, pc);
  OpenRegion(&c->region, &c->region_owned, &c->region_depth, &c->region_owner_depth, index);
  StartStrand(*ts, now, StrandPoint::kRegion, pc);
}

void RegionEnd(const void* callsite) {
  if (Off()) return;
  ThreadState* ts = State();
  if (ts == nullptr) return;
  Ctx* c = ts->cur;
  if (c == nullptr) {
    if (ts->outer_depth != 0) {
      CloseRegion(&ts->outer_region, &ts->outer_owned, &ts->outer_depth, &ts->outer_owner_depth);
    }
    return;
  }
  if (c->region_depth == 0) return;  // unbalanced: its begin was on another context
  const uint64_t now = Now(*ts);
  ts->adjacent = nullptr;
  const auto pc = reinterpret_cast<uintptr_t>(callsite);
  ChargeStrand(*ts, c, now, StrandPoint::kRegion, pc);
  CloseRegion(&c->region, &c->region_owned, &c->region_depth, &c->region_owner_depth);
  StartStrand(*ts, now, StrandPoint::kRegion, pc);
}

Snapshot TakeSnapshot() {
  Snapshot s;
  if (g_sites == nullptr) return s;
  uint32_t n = g_next_site.load(std::memory_order_acquire);
  if (n > kMaxSites) n = kMaxSites;
  s.sites.resize(n > 0 ? n - 1 : 0);
  for (uint32_t id = 1; id < n; ++id) {
    SiteTotals& out = s.sites[id - 1];
    const SiteInfo& info = g_sites[id];
    if (info.ready.load(std::memory_order_acquire) == 0) continue;
    if (info.kind >= kStrandKindBase) {
      const uint32_t code = info.kind - kStrandKindBase;
      out.kind = SiteKind::kStrand;
      out.start = static_cast<StrandPoint>(code / kStrandPoints);
      out.end = static_cast<StrandPoint>(code % kStrandPoints);
    } else {
      out.kind = static_cast<SiteKind>(info.kind);
    }
    out.pc = info.pc;
    out.parent_pc = info.parent_pc;
    out.callee_pc = info.callee_pc.load(std::memory_order_relaxed);
  }
  uint64_t spawns = 0, syncs = 0, stolen = 0;
  for (ThreadState* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next_registered) {
    stolen += t->stolen.load(std::memory_order_relaxed);
    spawns += t->spawns.load(std::memory_order_relaxed);
    syncs += t->syncs.load(std::memory_order_relaxed);
    for (uint32_t p = 0; p < kPages; ++p) {
      const OnWork* page = t->pages[p].load(std::memory_order_acquire);
      if (page == nullptr) continue;
      for (uint32_t i = 0; i < kPageSites; ++i) {
        const uint32_t id = p * kPageSites + i;
        if (id == 0 || id >= n) continue;
        SiteTotals& out = s.sites[id - 1];
        out.count += page[i].count.load(std::memory_order_relaxed);
        out.work_on_work += page[i].work.load(std::memory_order_relaxed);
        out.span_on_work += page[i].span.load(std::memory_order_relaxed);
        out.burdened_span_on_work += page[i].burdened_span.load(std::memory_order_relaxed);
      }
    }
  }
  ProgramState& p = g_program;
  p.lock.lock();
  s.program.work = p.work;
  s.program.span = p.span;
  s.program.burdened_span = p.burdened_span;
  s.program.computations = p.computations;
  for (int v = 0; v < kVariants; ++v) s.program.whatif_span[v] = p.whatif[v];
  for (uint32_t id = 1; id < n && id < p.capacity; ++id) {
    s.sites[id - 1].work_on_span = p.on_span[2 * id];
    s.sites[id - 1].span_on_span = p.on_span[2 * id + 1];
  }
  p.lock.unlock();
  s.program.spawns = spawns;
  s.program.syncs = syncs;
  s.program.stolen_continuations = stolen;
  const uint32_t regions = g_regions.count.load(std::memory_order_acquire);
  for (uint32_t r = 0; r < regions; ++r) s.program.regions.emplace_back(g_regions.names[r]);
  s.program.regions_dropped = g_regions.dropped.load(std::memory_order_relaxed);
  s.program.sites_dropped = g_sites_dropped.load(std::memory_order_relaxed);
  return s;
}

void LockForFork() {
  g_regions.lock.lock();
  g_program.lock.lock();
  LockPoolDepotsForFork();
}

void UnlockAfterFork() {
  UnlockPoolDepotsAfterFork();
  g_program.lock.unlock();
  g_regions.lock.unlock();
}

void ResetForTesting() {
  if (g_slots != nullptr) std::memset(static_cast<void*>(g_slots), 0, sizeof(Slot) * kSlots);
  if (g_sites != nullptr) std::memset(static_cast<void*>(g_sites), 0, sizeof(SiteInfo) * kMaxSites);
  g_next_site.store(1);
  g_sites_dropped.store(0);
  g_failed.store(false);
  g_cache_generation.fetch_add(1, std::memory_order_release);
  ProgramState& p = g_program;
  p.lock.lock();
  p.work = p.span = p.burdened_span = p.computations = 0;
  for (double& w : p.whatif) w = 0;
  if (p.on_span != nullptr) std::memset(p.on_span, 0, sizeof(uint64_t) * 2 * p.capacity);
  p.lock.unlock();
  g_regions.lock.lock();
  g_regions.count.store(0);
  std::memset(g_regions.names, 0, sizeof g_regions.names);
  g_regions.dropped.store(0);
  g_regions.lock.unlock();
  for (ThreadState* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next_registered) {
    t->spawns.store(0);
    t->syncs.store(0);
    t->stolen.store(0);
    for (uint32_t i = 0; i < kPages; ++i) {
      OnWork* page = t->pages[i].load(std::memory_order_acquire);
      if (page == nullptr) continue;
      for (uint32_t j = 0; j < kPageSites; ++j) {
        page[j].count.store(0);
        page[j].work.store(0);
        page[j].span.store(0);
        page[j].burdened_span.store(0);
      }
    }
  }
}

}  // namespace cilkprof::agent::workspan
