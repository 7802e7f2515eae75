// Creation contexts of OpenMP tasks: capture, interning, nodes (creation_path.h).
#include "ompt/creation_path.h"

#define UNW_LOCAL_ONLY  // the _UL entry points, as the unwinder uses
#include <libunwind.h>
#include <link.h>
#include <sched.h>
#include <omp-tools.h>

#include <cstdlib>
#include <cstring>

#include "locks/tail_call.h"
#include "ompt/ompt_records.h"
#include "runtime_view.h"

// The dynamic loader's TLS accessor (x86-64 ABI), for the address of ld.so's code.
extern "C" void* __tls_get_addr(void*);

namespace cilkprof::agent::ompt {
namespace {

// Frames of one creating task kept at most; a deeper one is recorded partial (its
// innermost frames, and nothing of its creators).
constexpr uint32_t kMaxCreationFrames = 256;

// ---- Boundary: libomp's code, written once at initialize, before any task exists.

constexpr uint32_t kMaxBoundaryRanges = 8;
unwinder::CodeRange g_boundary[kMaxBoundaryRanges];
uint32_t g_boundary_count = 0;  // atomic accesses; ranges below it are complete

// ---- Callees: the C library's and the dynamic loader's code, which libomp calls for
// itself (sched_yield in its spin waits, __tls_get_addr for its thread id): kept frames
// there directly under a libomp frame are the runtime's (unwinder/logical.h).
constexpr uint32_t kMaxCalleeRanges = 8;
unwinder::CodeRange g_callees[kMaxCalleeRanges];
uint32_t g_callee_count = 0;  // atomic accesses; ranges below it are complete

struct ModuleQuery {
  uintptr_t address;
  unwinder::CodeRange* out;   // where the module's executable ranges go
  uint32_t first;             // from this index
  uint32_t capacity;
  uint32_t* count;            // published count (release store)
};

int CollectModule(struct dl_phdr_info* info, size_t, void* arg) {
  auto* query = static_cast<ModuleQuery*>(arg);
  unwinder::CodeRange ranges[kMaxBoundaryRanges];
  uint32_t count = 0;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const unwinder::CodeRange range{info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
    holds = holds || range.Contains(query->address);
    if (count < kMaxBoundaryRanges) ranges[count++] = range;
  }
  if (!holds) return 0;
  uint32_t n = query->first;
  for (uint32_t i = 0; i < count && n < query->capacity; ++i) query->out[n++] = ranges[i];
  __atomic_store_n(query->count, n, __ATOMIC_RELEASE);
  return 1;
}

// Adds the executable ranges of the module holding `address` at `*count`.
bool CollectModuleOf(const void* address, unwinder::CodeRange* out, uint32_t capacity, uint32_t* count) {
  ModuleQuery query{reinterpret_cast<uintptr_t>(address), out, __atomic_load_n(count, __ATOMIC_RELAXED), capacity,
                    count};
  return dl_iterate_phdr(CollectModule, &query) != 0;
}

bool InRanges(const unwinder::CodeRange* ranges, uint32_t count, uintptr_t pc) {
  for (uint32_t i = 0; i < count; ++i) {
    if (ranges[i].Contains(pc)) return true;
  }
  return false;
}

// ---- Short spin locks (never held across a call that could block or signal).

struct SpinLock {
  bool held = false;
  void Lock() {
    while (__atomic_exchange_n(&held, true, __ATOMIC_ACQUIRE)) {
      while (__atomic_load_n(&held, __ATOMIC_RELAXED)) __builtin_ia32_pause();
    }
  }
  void Unlock() { __atomic_store_n(&held, false, __ATOMIC_RELEASE); }
};

// ---- Interned pc sequences: immutable, never freed (bounded by the program's distinct
// creation contexts, not by its number of tasks).

struct Sequence {
  uint64_t hash;
  uint32_t depth;
  uintptr_t pcs[];  // depth of them
};

uint64_t HashOf(const uintptr_t* pcs, uint32_t depth) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ depth;
  for (uint32_t i = 0; i < depth; ++i) {
    h ^= pcs[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h;
}

bool Same(const Sequence* s, uint64_t hash, const uintptr_t* pcs, uint32_t depth) {
  return s->hash == hash && s->depth == depth && std::memcmp(s->pcs, pcs, depth * sizeof(uintptr_t)) == 0;
}

// Open addressing, load factor <= 1/2. The old array is freed when it grows: only
// holders of the lock read it.
SpinLock g_intern_lock;
const Sequence** g_table = nullptr;
uint64_t g_table_mask = 0;
uint64_t g_table_used = 0;

bool Grow() {
  const uint64_t capacity = g_table == nullptr ? 1024 : 2 * (g_table_mask + 1);
  auto** table = static_cast<const Sequence**>(std::calloc(capacity, sizeof(Sequence*)));
  if (table == nullptr) return false;
  for (uint64_t i = 0; g_table != nullptr && i <= g_table_mask; ++i) {
    if (g_table[i] == nullptr) continue;
    uint64_t j = g_table[i]->hash & (capacity - 1);
    while (table[j] != nullptr) j = (j + 1) & (capacity - 1);
    table[j] = g_table[i];
  }
  std::free(g_table);
  g_table = table;
  g_table_mask = capacity - 1;
  return true;
}

const Sequence* InternLocked(uint64_t hash, const uintptr_t* pcs, uint32_t depth) {
  if ((g_table_used + 1) * 2 > g_table_mask + 1 && !Grow() && g_table == nullptr) return nullptr;
  uint64_t i = hash & g_table_mask;
  for (; g_table[i] != nullptr; i = (i + 1) & g_table_mask) {
    if (Same(g_table[i], hash, pcs, depth)) return g_table[i];
  }
  if ((g_table_used + 1) * 2 > g_table_mask + 1) return nullptr;  // full, and could not grow
  auto* s = static_cast<Sequence*>(std::malloc(sizeof(Sequence) + depth * sizeof(uintptr_t)));
  if (s == nullptr) return nullptr;
  s->hash = hash;
  s->depth = depth;
  std::memcpy(s->pcs, pcs, depth * sizeof(uintptr_t));
  g_table[i] = s;
  ++g_table_used;
  return s;
}

// A per-thread direct-mapped cache in front of the table: a program's tasks come from
// a few creation contexts, so most captures find theirs without the lock. Allocated at
// a thread's first capture, freed at its end (ForgetThreadCaches): only its pointer is
// in initial-exec TLS, whose space an injected (dlopen'ed) agent shares with every
// other late-loaded library in glibc's small static TLS surplus.
constexpr uint32_t kCacheSlots = 256;
__thread const Sequence** tls_cache __attribute__((tls_model("initial-exec")));

const Sequence* Intern(const uintptr_t* pcs, uint32_t depth) {
  const uint64_t hash = HashOf(pcs, depth);
  if (tls_cache == nullptr) {
    tls_cache = static_cast<const Sequence**>(std::calloc(kCacheSlots, sizeof(Sequence*)));
  }
  const Sequence** slot = tls_cache != nullptr ? &tls_cache[hash % kCacheSlots] : nullptr;
  if (slot != nullptr && *slot != nullptr && Same(*slot, hash, pcs, depth)) return *slot;
  g_intern_lock.Lock();
  const Sequence* s = InternLocked(hash, pcs, depth);
  g_intern_lock.Unlock();
  if (s != nullptr && slot != nullptr) *slot = s;
  return s;
}

// ---- Nodes: fixed-size, from a per-thread free list; a thread that frees more than
// it takes (tasks completing on another thread than their creator's) hands batches to
// a shared list. A free node's `recorded.parent` links the lists.

constexpr uint32_t kLocalMax = 512;   // a thread's free list beyond this gives back
constexpr uint32_t kBatch = 256;      // nodes moved at a time (and allocated per block)

struct FreeList {
  CreationPath* head = nullptr;
  uint32_t count = 0;
};

const CreationPath* PathOf(const unwinder::RecordedPath* recorded) {
  return reinterpret_cast<const CreationPath*>(recorded);
}

// A free node links to the next one through its parent field (no other field of a
// free node is read), typed as what it holds: the next node's `recorded`.
CreationPath* NextOf(const CreationPath* node) {
  return const_cast<CreationPath*>(PathOf(node->recorded.parent));
}

void SetNext(CreationPath* node, CreationPath* next) {
  node->recorded.parent = next != nullptr ? &next->recorded : nullptr;
}

__thread FreeList tls_free __attribute__((tls_model("initial-exec")));
SpinLock g_shared_lock;
FreeList g_shared;

// Moves up to `n` nodes from the front of `from` to the front of `to`.
void MoveNodes(FreeList* from, FreeList* to, uint32_t n) {
  for (uint32_t i = 0; i < n && from->head != nullptr; ++i) {
    CreationPath* node = from->head;
    from->head = NextOf(node);
    --from->count;
    SetNext(node, to->head);
    to->head = node;
    ++to->count;
  }
}

CreationPath* AllocateNode() {
  FreeList& local = tls_free;
  if (local.head == nullptr) {
    g_shared_lock.Lock();
    MoveNodes(&g_shared, &local, kBatch);
    g_shared_lock.Unlock();
  }
  if (local.head == nullptr) {
    auto* block = static_cast<CreationPath*>(std::malloc(kBatch * sizeof(CreationPath)));
    if (block == nullptr) return nullptr;
    for (uint32_t i = 0; i < kBatch; ++i) {
      SetNext(&block[i], local.head);
      local.head = &block[i];
    }
    local.count += kBatch;
  }
  CreationPath* node = local.head;
  local.head = NextOf(node);
  --local.count;
  return node;
}

void FreeNode(CreationPath* node) {
  FreeList& local = tls_free;
  SetNext(node, local.head);
  local.head = node;
  if (++local.count > kLocalMax) {
    g_shared_lock.Lock();
    MoveNodes(&local, &g_shared, kBatch);
    g_shared_lock.Unlock();
  }
}

// ---- Counts (CreationCaptureCounts). Full unwinds are rare: one shared counter. The
// captures are counted per thread and added to the shared total by batches, so that
// threads creating tasks at full speed do not share a cache line per task.

uint64_t g_captures = 0;      // atomic accesses
uint64_t g_full_unwinds = 0;  // atomic accesses
__thread uint32_t tls_captures __attribute__((tls_model("initial-exec")));

void CountCapture(bool full_unwind) {
  if (++tls_captures == kCaptureCountBatch) {
    __atomic_fetch_add(&g_captures, kCaptureCountBatch, __ATOMIC_RELAXED);
    tls_captures = 0;
  }
  if (full_unwind) __atomic_fetch_add(&g_full_unwinds, 1, __ATOMIC_RELAXED);
}

// The registers of the creating code where it called into libomp (LogicalRequest::start),
// from the encountering task's enter_frame: libomp's entry points (__kmpc_omp_task,
// __kmpc_omp_task_with_deps, __kmpc_fork_call, the GOMP_* ones) store their own
// __builtin_frame_address(0) there before they report task_create or parallel_begin, so
// the record at enter_frame holds the creating code's rbp and, as its return address,
// codeptr_ra. Anything else (no frame, a CFA, another frame: an entry that had set
// enter_frame before, __kmp_serialized_parallel's own frame, an if(0) task's
// application frame) does not match codeptr_ra and is refused.
bool StartAtRuntimeEntry(const ompt_frame_t* frame, const void* codeptr_ra, cilkprof_saved_regs_t* regs) {
  if (frame == nullptr || codeptr_ra == nullptr || frame->enter_frame.ptr == nullptr) return false;
  if ((frame->enter_frame_flags & ompt_frame_cfa) != 0) return false;
  const auto sp_floor = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return unwinder::CallerOfFrameRecord(reinterpret_cast<uintptr_t>(frame->enter_frame.ptr),
                                       reinterpret_cast<uintptr_t>(codeptr_ra), sp_floor, regs);
}

}  // namespace

bool ConfigureCreationPaths(const void* libomp_address) {
  if (libomp_address == nullptr) return false;
  if (__atomic_load_n(&g_callee_count, __ATOMIC_ACQUIRE) == 0) {
    CollectModuleOf(reinterpret_cast<const void*>(&sched_yield), g_callees, kMaxCalleeRanges, &g_callee_count);
    CollectModuleOf(reinterpret_cast<const void*>(&__tls_get_addr), g_callees, kMaxCalleeRanges, &g_callee_count);
  }
  return CollectModuleOf(libomp_address, g_boundary, kMaxBoundaryRanges, &g_boundary_count);
}

const CreationPath* CaptureCreationPath(const CreationPath* parent,
                                        const ompt_frame_t* encountering_frame, const void* codeptr_ra) {
  unwinder::LogicalRequest request;
  // The verified frame-pointer walk in both modes: it checks every frame record against
  // the call before its return address and steps frames without one with their CFI
  // (unwinder/cursor.h), so it records what a DWARF walk would, and user code built with
  // frame pointers needs no libunwind step, whose two signal-mask system calls per
  // frame made a DWARF capture four times as costly. Samples keep the profile's mode.
  request.mode = unwinder::Mode::kFramePointer;
  request.elided = ElidedRanges(&request.elided_count);  // the agent's code and libomp's
  request.boundary = BoundaryRanges(&request.boundary_count);
  request.callees = CalleeRanges(&request.callee_count);
  cilkprof_saved_regs_t start;
  // Only when the walk does not start at the creating code: libunwind's getcontext,
  // the registers only, without getcontext()'s system call for the signal mask (the
  // walk never needs it). On x86-64 its context is a ucontext_t (dwarf_cursor.cc).
  unw_context_t context;
  const bool full_unwind = !StartAtRuntimeEntry(encountering_frame, codeptr_ra, &start);
  if (!full_unwind) {
    request.start = &start;
  } else {
    if (unw_getcontext(&context) != 0) return nullptr;
    request.context = reinterpret_cast<const ucontext_t*>(&context);
    request.probe_frameless_leaf = false;  // frame 0 is this function
  }
  CountCapture(full_unwind);
  unwinder::Frame frames[kMaxCreationFrames];
  const unwinder::LogicalResult r = unwinder::UnwindLogical(request, frames, kMaxCreationFrames);
  uintptr_t pcs[kMaxCreationFrames];
  uint32_t depth = 0;
  // A creating function whose last statement created the task (or opened the region)
  // jumped to libomp's entry point (a tail call): it has no frame, and the walk starts
  // in its caller. The call before codeptr_ra then reached that function, not libomp
  // (locks/tail_call.h): its entry goes in as the innermost frame (its first line).
  const auto ra = reinterpret_cast<uintptr_t>(codeptr_ra);
  if (r.depth > 0 && r.depth < kMaxCreationFrames && frames[0].pc + 1 == ra) {
    const uintptr_t tail_caller = locks::TailCaller(ra);
    if (tail_caller != 0) pcs[depth++] = tail_caller;
  }
  for (uint32_t i = 0; i < r.depth; ++i) pcs[depth++] = frames[i].pc;
  const Sequence* sequence = Intern(pcs, depth);
  if (sequence == nullptr) return nullptr;
  CreationPath* node = AllocateNode();
  if (node == nullptr) return nullptr;
  Retain(parent);
  node->recorded.parent = parent != nullptr ? &parent->recorded : nullptr;
  node->recorded.pcs = sequence->pcs;
  node->recorded.depth = sequence->depth;
  node->recorded.partial = r.partial || r.truncated;
  __atomic_store_n(&node->refs, 1u, __ATOMIC_RELAXED);
  return node;
}

void Retain(const CreationPath* path) {
  if (path != nullptr) __atomic_fetch_add(&const_cast<CreationPath*>(path)->refs, 1u, __ATOMIC_RELAXED);
}

void Release(const CreationPath* path) {
  while (path != nullptr) {
    auto* node = const_cast<CreationPath*>(path);
    if (__atomic_sub_fetch(&node->refs, 1u, __ATOMIC_ACQ_REL) != 0) return;
    path = PathOf(node->recorded.parent);
    FreeNode(node);
  }
}

CaptureCounts CreationCaptureCounts() {
  CaptureCounts counts;
  counts.captures = __atomic_load_n(&g_captures, __ATOMIC_RELAXED) + tls_captures;
  counts.full_unwinds = __atomic_load_n(&g_full_unwinds, __ATOMIC_RELAXED);
  return counts;
}

const void* UserCreationSite(const void* codeptr_ra) {
  uint32_t count = 0;
  const unwinder::CodeRange* boundary = BoundaryRanges(&count);
  if (codeptr_ra == nullptr || !InRanges(boundary, count, reinterpret_cast<uintptr_t>(codeptr_ra))) return codeptr_ra;
  // libomp 14's taskloop stores its own return address (inside __kmpc_taskloop) and
  // enters the frame of an inner function (inside __kmp_taskloop_linear): neither leads
  // to the user's code without unwinding libomp's frames, whose frame pointers are not
  // guaranteed. So unwind with its CFI, from here: once per chunk task of a taskloop.
  uint32_t elided_count = 0;
  const unwinder::CodeRange* elided = ElidedRanges(&elided_count);  // the agent's and libomp's code
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return codeptr_ra;
  for (int frame = 0; frame < 64 && unw_step(&cursor) > 0; ++frame) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0) break;
    if (!InRanges(elided, elided_count, ip)) return reinterpret_cast<const void*>(ip);
  }
  return codeptr_ra;
}

void ReleaseLocksAfterFork() {
  g_intern_lock.Unlock();
  g_shared_lock.Unlock();
}

void ForgetThreadCaches() {
  const Sequence** cache = tls_cache;
  tls_cache = nullptr;
  std::free(cache);
}

const unwinder::CodeRange* BoundaryRanges(uint32_t* count) {
  *count = __atomic_load_n(&g_boundary_count, __ATOMIC_ACQUIRE);
  return g_boundary;
}

const unwinder::CodeRange* CalleeRanges(uint32_t* count) {
  *count = __atomic_load_n(&g_callee_count, __ATOMIC_ACQUIRE);
  return g_callees;
}

const unwinder::RecordedPath* CurrentTaskPath() {
  const OmpThread* thread = CurrentOmpThread();
  if (thread == nullptr) return nullptr;
  const CreationPath* path = thread->task_path;
  return path != nullptr ? &path->recorded : nullptr;
}

}  // namespace cilkprof::agent::ompt
