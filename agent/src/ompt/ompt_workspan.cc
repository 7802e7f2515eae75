// The work/span engine of OpenMP task graphs (ompt_workspan.h has the model).
//
// State:
//  - per task (TaskRecord::workspan, TaskState): its span and burdened span so far
//    (up to the start of its running strand), and references to the join cells its
//    end is delivered to: its creator's node (taskwait), its innermost taskgroup, its
//    region's barrier cell (and the barrier generation it belongs to);
//  - per task, a node (a Cell from the pools): the cell its own children deliver to,
//    plus what its completion needs (creation site, distinct sites on its creation
//    chain, spans at creation);
//  - per region (RegionRecord::workspan, RegionState): the span its implicit tasks
//    start at, its barrier cell, the encountering task's site chain;
//  - per thread (ThreadState, mmap'd, initial-exec TLS): the counter clock, the start
//    of the running strand, the work, and per-site sums, read by snapshots.
// Span profiles (work-on-span, span-on-span; agent/src/workspan/profile.h): a task's
// node holds the profile of its longest path from the start of the top-level region
// to its current point (`path`); a created task copies its creator's, a top-most task
// adds its own entry (site, its work, its span) at its completion, and every join cell
// keeps, per slot, a copy of the profile of the longest path delivered to it, which
// the joining task takes when that path is longer than its own (as the Cilk engine's
// lchild wins at a sync). Profiles live in the pools, so memory is bounded by the
// sites per live task and per live join cell. A task's work for its entry is its own
// and that of the descendants completed before it (all of them when it joins them):
// each node sums what its completed descendants forward (`work`), and a completed
// node, closed, passes later arrivals on to its creator's node (`outer`).
// A profile cell's copy is guarded by the cell's own spin flag, held only for the copy
// (never while the program runs: no lock of the program's).
// Cells are refcounted, so a task that outlives its creator (or a late event) still
// delivers into valid memory; a cell is freed by whoever drops the last reference,
// into that thread's pool.
#include "ompt/ompt_workspan.h"

#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "monotonic_clock.h"
#include "workspan/pool.h"
#include "workspan/profile.h"

namespace cilkprof::agent::ompt::workspan {
namespace {

using cilkprof::agent::workspan::Pool;
using cilkprof::agent::workspan::Profile;
namespace ws = cilkprof::agent::workspan;

constexpr int kChain = 6;            // distinct creation sites remembered per task
constexpr uint32_t kMaxSites = 4096;  // site ids 1 .. kMaxSites - 1
constexpr uint32_t kTableSlots = 2 * kMaxSites;

// A join cell: the longest span delivered to it (slot 0, or the barrier generation's
// slot), and, for a task's node, the task's identity.
struct Cell {
  std::atomic<uint64_t> span[2];
  std::atomic<uint64_t> bspan[2];
  std::atomic<uint32_t> refs;
  uint16_t site;            // task nodes: the creation site (0: implicit task)
  uint16_t topmost;         // task nodes: no ancestor created at the same site
  uint16_t chain[kChain];   // task nodes: distinct sites on the creation chain (0: none)
  uint64_t created_span, created_bspan;
  Cell* outer;              // taskgroups: the task's enclosing group; task nodes: the
                            // creator's node (a reference)
  // The profile of the longest path delivered to each slot (its span: pspan), guarded
  // by prof_lock; `has` bit i: slot i holds a delivered path.
  std::atomic<uint32_t> prof_lock;
  uint32_t has;
  uint64_t pspan[2];
  Profile prof[2];
  // Task nodes: the task's path profile (owned by the task's running thread); region
  // barrier cells: the profile the region's implicit tasks start with.
  Profile path;
  // Task nodes: work forwarded by completed descendants; kClosed once the task completed.
  std::atomic<uint64_t> work;
};
constexpr uint64_t kClosed = 1ull << 63;

enum TaskFlags : uint32_t {
  kMeasured = 1u << 0,
  kRunning = 1u << 1,   // a strand of the task runs (on the thread of its last event)
  kWaiting = 1u << 2,   // in a taskwait, taskgroup wait or barrier
  kGen = 1u << 3,       // barrier generation parity (slot of the barrier cell)
  kImplicit = 1u << 4,
  kCompleted = 1u << 5,
};

struct TaskState {
  uint64_t span, bspan;
  Cell* node;
  Cell* parent;   // the creator's node
  Cell* group;    // innermost taskgroup
  Cell* barrier;  // the region's barrier cell
  uint32_t flags;
  uint32_t unused;
  uint64_t work;  // the task's own strands
};
static_assert(sizeof(TaskState) <= kModuleStateBytes, "TaskRecord::workspan is too small");

enum RegionFlags : uint32_t { kRegionMeasured = 1u << 0, kTopLevel = 1u << 1 };

struct RegionState {
  uint64_t start_span, start_bspan;
  Cell* barrier;
  uint16_t chain[kChain];
  uint32_t flags;
};
static_assert(sizeof(RegionState) <= kModuleStateBytes, "RegionRecord::workspan is too small");

struct ThreadState {
  std::atomic<uint64_t> counter{0};  // the counter clock
  uint64_t strand_start = 0;
  Pool pool;
  std::atomic<uint64_t> work{0}, tasks{0}, deps{0}, syncs{0};
  std::atomic<uint64_t> count[kMaxSites], wow[kMaxSites], sow[kMaxSites], bsow[kMaxSites];
  std::atomic<uint64_t> wos[kMaxSites], sos[kMaxSites];  // ended top-level regions' critical paths
  ThreadState* next_registered = nullptr;
};

Config g_config;
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_failed{false};
std::atomic<ThreadState*> g_threads{nullptr};
__thread ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;

// Ended top-level regions.
std::atomic<uint64_t> g_span{0}, g_bspan{0}, g_computations{0};
void (*g_top_level_end)() = nullptr;

// Sites: codeptr_ra -> id (1-based), a lock-free open-addressing table.
std::atomic<uintptr_t> g_slot_pc[kTableSlots];
std::atomic<uint32_t> g_slot_id[kTableSlots];
std::atomic<uintptr_t> g_site_pc[kMaxSites];
std::atomic<uint32_t> g_site_count{0};
std::atomic<uint64_t> g_sites_dropped{0};

ThreadState* State() {
  ThreadState* ts = tls_state;
  if (ts != nullptr) return ts;
  void* memory = mmap(nullptr, sizeof(ThreadState), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    g_failed.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  ts = new (memory) ThreadState();
  ThreadState* head = g_threads.load(std::memory_order_relaxed);
  do {
    ts->next_registered = head;
  } while (!g_threads.compare_exchange_weak(head, ts, std::memory_order_release, std::memory_order_relaxed));
  tls_state = ts;
  return ts;
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

inline void Add(std::atomic<uint64_t>& a, uint64_t v) {  // single writer: the owner thread
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

inline void Max(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

inline TaskState& Task(TaskRecord* record) { return *reinterpret_cast<TaskState*>(record->workspan); }
inline RegionState& Region(RegionRecord* record) { return *reinterpret_cast<RegionState*>(record->workspan); }

Cell* NewCell(ThreadState& ts) {
  void* memory = ts.pool.Allocate(sizeof(Cell));
  if (memory == nullptr) {
    g_failed.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  std::memset(memory, 0, sizeof(Cell));
  Cell* c = new (memory) Cell();
  c->refs.store(1, std::memory_order_relaxed);
  return c;
}

inline Cell* Ref(Cell* c) {
  if (c != nullptr) c->refs.fetch_add(1, std::memory_order_relaxed);
  return c;
}

void Release(ThreadState& ts, Cell* c) {
  while (c != nullptr && c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Cell* outer = c->outer;
    c->prof[0].Clear(ts.pool);
    c->prof[1].Clear(ts.pool);
    c->path.Clear(ts.pool);
    ts.pool.Free(c);
    c = outer;
  }
}

uint16_t InternSite(uintptr_t pc) {
  if (pc == 0) return 0;
  uint32_t slot = static_cast<uint32_t>((pc * 0x9E3779B97F4A7C15ull) >> 40) % kTableSlots;
  for (uint32_t probe = 0; probe < kTableSlots; ++probe, slot = (slot + 1) % kTableSlots) {
    uintptr_t seen = g_slot_pc[slot].load(std::memory_order_acquire);
    if (seen == 0) {
      if (g_slot_pc[slot].compare_exchange_strong(seen, pc, std::memory_order_acq_rel)) {
        const uint32_t id = g_site_count.fetch_add(1, std::memory_order_relaxed) + 1;
        if (id >= kMaxSites) {
          g_slot_id[slot].store(UINT32_MAX, std::memory_order_release);
          return 0;
        }
        g_site_pc[id].store(pc, std::memory_order_release);
        g_slot_id[slot].store(id, std::memory_order_release);
        return static_cast<uint16_t>(id);
      }
    }
    if (seen == pc) {
      uint32_t id;
      // Another thread interned it a moment ago and is publishing its id.
      while ((id = g_slot_id[slot].load(std::memory_order_acquire)) == 0) __builtin_ia32_pause();
      return id == UINT32_MAX ? 0 : static_cast<uint16_t>(id);
    }
  }
  return 0;
}

inline void StartStrand(ThreadState& ts, TaskState& t) {
  if ((t.flags & kMeasured) == 0) return;
  ts.strand_start = Now(ts);
  t.flags |= kRunning;
}

// Ends the task's running strand: its time is work (of the task and of every site on
// its creation chain) and extends the task's span.
inline void EndStrand(ThreadState& ts, TaskState& t) {
  if ((t.flags & kRunning) == 0) return;
  t.flags &= ~kRunning;
  const uint64_t d = Now(ts) - ts.strand_start;
  t.span += d;
  t.bspan += d;
  t.work += d;
  Add(ts.work, d);
  if (t.node != nullptr) {
    for (uint16_t site : t.node->chain) {
      if (site == 0) break;
      Add(ts.wow[site], d);
    }
  }
}

void Fail() { g_failed.store(true, std::memory_order_relaxed); }

void LockProfiles(Cell* c) {
  while (c->prof_lock.exchange(1, std::memory_order_acquire) != 0) {
    while (c->prof_lock.load(std::memory_order_relaxed) != 0) __builtin_ia32_pause();
  }
}
void UnlockProfiles(Cell* c) { c->prof_lock.store(0, std::memory_order_release); }

// The task's path ends at `c`: the longest delivered path (and its profile) wins.
void Deliver(ThreadState& ts, Cell* c, int slot, const TaskState& t) {
  if (c == nullptr) return;
  const uint64_t longest = c->span[slot].load(std::memory_order_acquire);
  Max(c->span[slot], t.span);
  Max(c->bspan[slot], t.bspan);
  // A strictly longer path was delivered: its profile is (or is being) kept instead.
  if (t.node == nullptr || longest > t.span) return;
  LockProfiles(c);
  const uint32_t bit = 1u << slot;
  if ((c->has & bit) == 0 || t.span > c->pspan[slot]) {
    c->has |= bit;
    c->pspan[slot] = t.span;
    if (!c->prof[slot].CopyFrom(ts.pool, t.node->path)) Fail();
  }
  UnlockProfiles(c);
}

// Takes the profile of `c`'s longest path into the task's when that path is longer.
// (Every path joined here has been delivered: the slot's span is its profile's.)
void JoinProfile(ThreadState& ts, TaskState& t, Cell* c, int slot, uint64_t span_before) {
  if (t.node == nullptr || c->span[slot].load(std::memory_order_acquire) <= span_before) return;
  LockProfiles(c);
  if ((c->has & (1u << slot)) != 0 && c->pspan[slot] > span_before) {
    if (!t.node->path.CopyFrom(ts.pool, c->prof[slot])) Fail();
  }
  UnlockProfiles(c);
}

void Join(ThreadState& ts, TaskState& t, Cell* c, int slot) {
  if (c == nullptr) return;
  const uint64_t span = c->span[slot].load(std::memory_order_acquire);
  const uint64_t bspan = c->bspan[slot].load(std::memory_order_acquire);
  JoinProfile(ts, t, c, slot, t.span);
  if (span > t.span) t.span = span;
  if (bspan > t.bspan) t.bspan = bspan;
}

// Adds `work` to the nearest node up from `c` that is not closed (a completed task's
// node passes it on to its creator's).
void ForwardWork(Cell* c, uint64_t work) {
  while (c != nullptr) {
    uint64_t cur = c->work.load(std::memory_order_acquire);
    for (;;) {
      if ((cur & kClosed) != 0) break;
      if (c->work.compare_exchange_weak(cur, cur + work, std::memory_order_acq_rel, std::memory_order_acquire)) return;
    }
    c = c->outer;
  }
}

inline int GenSlot(const TaskState& t) { return (t.flags & kGen) != 0 ? 1 : 0; }

void ReleaseTask(ThreadState& ts, TaskState& t) {
  Release(ts, t.node);
  Release(ts, t.parent);
  Release(ts, t.group);
  Release(ts, t.barrier);
  t = TaskState{};
}

void Complete(ThreadState& ts, TaskState& t) {
  if ((t.flags & kMeasured) == 0 || (t.flags & kCompleted) != 0) return;
  EndStrand(ts, t);
  if (Cell* n = t.node; n != nullptr) {
    // Its work: its own and that of the descendants completed so far; later ones
    // forward theirs past it.
    const uint64_t work = t.work + (n->work.exchange(kClosed, std::memory_order_acq_rel) & ~kClosed);
    ForwardWork(n->outer, work);
    if (n->site != 0 && n->topmost != 0) {
      Add(ts.sow[n->site], t.span - n->created_span);
      Add(ts.bsow[n->site], t.bspan - n->created_bspan);
      if (!n->path.Add(ts.pool, n->site, work, t.span - n->created_span)) Fail();
    }
  }
  Deliver(ts, t.parent, 0, t);
  Deliver(ts, t.group, 0, t);
  Deliver(ts, t.barrier, GenSlot(t), t);
  ReleaseTask(ts, t);
  t.flags = kCompleted;
}

inline bool IsBarrier(ompt_sync_region_t kind) {
  switch (kind) {
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_explicit:
    case ompt_sync_region_barrier_implementation:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_teams:
      return true;
    default:
      return false;
  }
}

inline ThreadState* Ready() {
  if (!g_enabled.load(std::memory_order_relaxed)) return nullptr;
  return State();
}

}  // namespace

bool Configure(const Config& config) {
  g_config = config;
  g_enabled.store(true, std::memory_order_release);
  return true;
}

bool Enabled() { return g_enabled.load(std::memory_order_relaxed); }

void Charge(uint64_t units) {
  if (!Enabled() || g_config.clock != ClockKind::kCounter) return;
  if (ThreadState* ts = State(); ts != nullptr) Add(ts->counter, units);
}

void ParallelBegin(TaskRecord* encountering, RegionRecord* region) {
  ThreadState* ts = Ready();
  if (region == nullptr) return;
  RegionState& r = Region(region);
  r = RegionState{};
  if (ts == nullptr) return;
  r.barrier = NewCell(*ts);
  if (r.barrier == nullptr) return;
  TaskState* enc = encountering != nullptr ? &Task(encountering) : nullptr;
  if (enc != nullptr && (enc->flags & kMeasured) != 0) {
    EndStrand(*ts, *enc);
    r.start_span = enc->span;
    r.start_bspan = enc->bspan;
    if (enc->node != nullptr) {
      std::memcpy(r.chain, enc->node->chain, sizeof r.chain);
      if (!r.barrier->path.CopyFrom(ts->pool, enc->node->path)) Fail();
      r.barrier->outer = Ref(enc->node);  // where the implicit tasks' work goes
    }
    r.flags = kRegionMeasured;
  } else {
    r.flags = kRegionMeasured | kTopLevel;  // an outermost region: a computation of its own
  }
}

void ParallelEnd(TaskRecord* encountering, RegionRecord* region) {
  ThreadState* ts = Ready();
  if (ts == nullptr || region == nullptr) return;
  RegionState& r = Region(region);
  if ((r.flags & kRegionMeasured) == 0) return;
  // Everything of the region was delivered to one of the two generation slots of its
  // barrier cell; the older slot holds nothing longer than the newer.
  Cell* b = r.barrier;
  const uint64_t span0 = b->span[0].load(std::memory_order_acquire), span1 = b->span[1].load(std::memory_order_acquire);
  const uint64_t span = std::max(span0, span1);
  const uint64_t bspan =
      std::max(b->bspan[0].load(std::memory_order_acquire), b->bspan[1].load(std::memory_order_acquire));
  const int slot = span1 > span0 ? 1 : 0;  // the path of the region's span
  const bool top_level = (r.flags & kTopLevel) != 0;
  if (top_level) {
    // Every event of the region has happened: its critical path's profile is final.
    for (const auto& e : b->prof[slot]) {
      Add(ts->wos[e.site], e.work);
      Add(ts->sos[e.site], e.span);
    }
  } else if (encountering != nullptr) {
    TaskState& enc = Task(encountering);
    if ((enc.flags & kMeasured) != 0) JoinProfile(*ts, enc, b, slot, enc.span);
  }
  Release(*ts, b);
  r = RegionState{};
  if (top_level) {
    g_span.fetch_add(span, std::memory_order_relaxed);
    g_bspan.fetch_add(bspan, std::memory_order_relaxed);
    g_computations.fetch_add(1, std::memory_order_release);
    if (g_top_level_end != nullptr) g_top_level_end();
    return;
  }
  if (encountering == nullptr) return;
  TaskState& enc = Task(encountering);
  if ((enc.flags & kMeasured) == 0) return;
  if (span > enc.span) enc.span = span;
  if (bspan > enc.bspan) enc.bspan = bspan;
  StartStrand(*ts, enc);
}

void ImplicitTaskBegin(RegionRecord* region, TaskRecord* task, uint32_t flags) {
  ThreadState* ts = Ready();
  if (task == nullptr) return;
  TaskState& t = Task(task);
  t = TaskState{};
  if (ts == nullptr || region == nullptr || (flags & ompt_task_initial) != 0) return;
  RegionState& r = Region(region);
  if ((r.flags & kRegionMeasured) == 0) return;
  t.node = NewCell(*ts);
  if (t.node == nullptr) return;
  std::memcpy(t.node->chain, r.chain, sizeof r.chain);
  if (!t.node->path.CopyFrom(ts->pool, r.barrier->path)) Fail();
  t.node->outer = Ref(r.barrier->outer);
  t.span = r.start_span;
  t.bspan = r.start_bspan;
  t.barrier = Ref(r.barrier);
  t.flags = kMeasured | kImplicit;
  StartStrand(*ts, t);
}

void ImplicitTaskEnd(TaskRecord* task) {
  ThreadState* ts = Ready();
  if (ts == nullptr || task == nullptr) return;
  TaskState& t = Task(task);
  if ((t.flags & kMeasured) == 0) return;
  EndStrand(*ts, t);
  ReleaseTask(*ts, t);
}

void TaskCreate(TaskRecord* parent, TaskRecord* child, const void* codeptr_ra, uint32_t flags,
                bool has_dependences) {
  (void)flags;
  ThreadState* ts = Ready();
  if (child == nullptr) return;
  TaskState& c = Task(child);
  c = TaskState{};
  if (ts == nullptr || parent == nullptr) return;
  TaskState& p = Task(parent);
  if ((p.flags & kMeasured) == 0 || p.node == nullptr) return;  // outside any measured region
  const bool was_running = (p.flags & kRunning) != 0;
  EndStrand(*ts, p);
  Cell* node = NewCell(*ts);
  if (node == nullptr) return;
  const uint16_t site = InternSite(reinterpret_cast<uintptr_t>(codeptr_ra));
  if (site == 0 && codeptr_ra != nullptr) g_sites_dropped.fetch_add(1, std::memory_order_relaxed);
  node->site = site;
  std::memcpy(node->chain, p.node->chain, sizeof node->chain);
  bool on_chain = false;
  int free_slot = -1;
  for (int i = 0; i < kChain; ++i) {
    if (node->chain[i] == site) on_chain = true;
    if (node->chain[i] == 0) {
      free_slot = i;
      break;
    }
  }
  node->topmost = site != 0 && !on_chain ? 1 : 0;
  // A chain full of other sites: this site's work then goes uncounted for it rather
  // than twice (its descendants could not know they are not top-most).
  if (node->topmost != 0) {
    if (free_slot >= 0) {
      node->chain[free_slot] = site;
    } else {
      node->topmost = 0;
      g_sites_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  }
  c.node = node;
  c.span = p.span;
  c.bspan = p.bspan + g_config.burden_ticks;
  p.bspan += g_config.burden_ticks;
  node->created_span = c.span;
  node->created_bspan = c.bspan;
  if (!node->path.CopyFrom(ts->pool, p.node->path)) Fail();
  node->outer = Ref(p.node);
  c.parent = Ref(p.node);
  c.group = Ref(p.group);
  c.barrier = Ref(p.barrier);
  c.flags = kMeasured | (p.flags & kGen);
  if (site != 0) Add(ts->count[site], 1);
  Add(ts->tasks, 1);
  if (has_dependences) Add(ts->deps, 1);
  if (was_running) StartStrand(*ts, p);
}

void TaskSchedule(TaskRecord* prior, ompt_task_status_t prior_status, TaskRecord* next) {
  ThreadState* ts = Ready();
  if (ts == nullptr) return;
  if (prior != nullptr) {
    TaskState& p = Task(prior);
    if (CompletesTask(prior_status)) {
      Complete(*ts, p);
    } else if (prior_status != ompt_task_early_fulfill) {
      // switch, yield, detach (its completion comes with the late fulfill). Not an
      // early fulfill: reported by the thread that fulfilled the event while the task
      // runs, maybe on another thread, whose strand is not this thread's to end.
      EndStrand(*ts, p);
    }
  }
  if (next != nullptr) {
    TaskState& n = Task(next);
    if ((n.flags & kWaiting) == 0) StartStrand(*ts, n);
  }
}

void SyncRegionBegin(ompt_sync_region_t kind, TaskRecord* task, const void* codeptr_ra) {
  (void)codeptr_ra;
  ThreadState* ts = Ready();
  if (ts == nullptr || task == nullptr) return;
  TaskState& t = Task(task);
  if ((t.flags & kMeasured) == 0) return;
  if (kind == ompt_sync_region_taskgroup) {
    Cell* g = NewCell(*ts);
    if (g == nullptr) return;
    g->outer = t.group;  // the task's reference moves into the new group
    t.group = g;
    return;
  }
  if (kind == ompt_sync_region_taskwait) {
    EndStrand(*ts, t);
    t.flags |= kWaiting;
  } else if (IsBarrier(kind)) {
    EndStrand(*ts, t);
    Deliver(*ts, t.barrier, GenSlot(t), t);  // this task's arrival
    if (kind == ompt_sync_region_barrier_implicit_parallel && t.node != nullptr) {
      // The implicit task's own work is done: it (and its descendants', now and
      // later) belongs to the encountering task of a nested region. Here, not at its
      // end, which libomp reports for workers at their next fork.
      ForwardWork(t.node->outer, t.work + (t.node->work.exchange(kClosed, std::memory_order_acq_rel) & ~kClosed));
      t.work = 0;
    }
    t.flags |= kWaiting;
  }
}

void SyncRegionWaitBegin(ompt_sync_region_t kind, TaskRecord* task) {
  ThreadState* ts = Ready();
  if (ts == nullptr || task == nullptr) return;
  TaskState& t = Task(task);
  if ((t.flags & kMeasured) == 0) return;
  if (kind == ompt_sync_region_taskwait || kind == ompt_sync_region_taskgroup || IsBarrier(kind)) {
    EndStrand(*ts, t);
    t.flags |= kWaiting;
  }
}

void SyncRegionEnd(ompt_sync_region_t kind, TaskRecord* task, const void* codeptr_ra) {
  (void)codeptr_ra;
  ThreadState* ts = Ready();
  if (ts == nullptr || task == nullptr) return;
  TaskState& t = Task(task);
  if ((t.flags & kMeasured) == 0) return;
  if (kind == ompt_sync_region_taskwait) {
    EndStrand(*ts, t);
    Join(*ts, t, t.node, 0);
  } else if (kind == ompt_sync_region_taskgroup) {
    EndStrand(*ts, t);
    Cell* g = t.group;
    if (g == nullptr) return;
    Join(*ts, t, g, 0);
    t.group = g->outer;  // the reference moves back to the task
    g->outer = nullptr;
    Release(*ts, g);
  } else if (kind == ompt_sync_region_barrier_implicit_parallel) {
    // The region's end: its encountering task joins everything (ParallelEnd); the
    // implicit task only ends (libomp may report that end at the next fork).
    t.flags &= ~kWaiting;
    Add(ts->syncs, 1);
    return;
  } else if (IsBarrier(kind)) {
    EndStrand(*ts, t);
    Join(*ts, t, t.barrier, GenSlot(t));
    t.flags ^= kGen;
  } else {
    return;
  }
  t.flags &= ~kWaiting;
  Add(ts->syncs, 1);
  StartStrand(*ts, t);
}

ws::Snapshot TakeSnapshot(Extra* extra) {
  ws::Snapshot s;
  const uint32_t sites = std::min(g_site_count.load(std::memory_order_acquire), kMaxSites - 1);
  s.sites.resize(sites);
  for (uint32_t id = 1; id <= sites; ++id) {
    ws::SiteTotals& t = s.sites[id - 1];
    t.kind = ws::SiteKind::kSpawn;
    t.pc = g_site_pc[id].load(std::memory_order_acquire);  // 0 while being published
  }
  Extra e;
  for (ThreadState* ts = g_threads.load(std::memory_order_acquire); ts != nullptr; ts = ts->next_registered) {
    s.program.work += ts->work.load(std::memory_order_relaxed);
    s.program.syncs += ts->syncs.load(std::memory_order_relaxed);
    e.tasks += ts->tasks.load(std::memory_order_relaxed);
    e.tasks_with_dependences += ts->deps.load(std::memory_order_relaxed);
    for (uint32_t id = 1; id <= sites; ++id) {
      ws::SiteTotals& t = s.sites[id - 1];
      t.count += ts->count[id].load(std::memory_order_relaxed);
      t.work_on_work += ts->wow[id].load(std::memory_order_relaxed);
      t.span_on_work += ts->sow[id].load(std::memory_order_relaxed);
      t.burdened_span_on_work += ts->bsow[id].load(std::memory_order_relaxed);
      t.work_on_span += ts->wos[id].load(std::memory_order_relaxed);
      t.span_on_span += ts->sos[id].load(std::memory_order_relaxed);
    }
  }
  s.program.spawns = e.tasks;
  s.program.span = g_span.load(std::memory_order_relaxed);
  s.program.burdened_span = g_bspan.load(std::memory_order_relaxed);
  s.program.computations = g_computations.load(std::memory_order_acquire);
  s.program.sites_dropped = g_sites_dropped.load(std::memory_order_relaxed);
  if (extra != nullptr) *extra = e;
  return s;
}

bool EngineFailed() { return g_failed.load(std::memory_order_relaxed); }

void SetTopLevelEndCallback(void (*callback)()) { g_top_level_end = callback; }

void ResetForTesting() {
  for (ThreadState* ts = g_threads.load(std::memory_order_acquire); ts != nullptr; ts = ts->next_registered) {
    ts->counter.store(0);
    ts->work.store(0);
    ts->tasks.store(0);
    ts->deps.store(0);
    ts->syncs.store(0);
    for (uint32_t id = 0; id < kMaxSites; ++id) {
      ts->count[id].store(0);
      ts->wow[id].store(0);
      ts->sow[id].store(0);
      ts->bsow[id].store(0);
      ts->wos[id].store(0);
      ts->sos[id].store(0);
    }
  }
  for (uint32_t i = 0; i < kTableSlots; ++i) {
    g_slot_pc[i].store(0);
    g_slot_id[i].store(0);
  }
  for (uint32_t i = 0; i < kMaxSites; ++i) g_site_pc[i].store(0);
  g_site_count.store(0);
  g_sites_dropped.store(0);
  g_span.store(0);
  g_bspan.store(0);
  g_computations.store(0);
  g_failed.store(false);
}

}  // namespace cilkprof::agent::ompt::workspan
