#include "ompt/ompt_runtime_view.h"

#include <link.h>

#include "ompt/ompt_records.h"
#include "runtime_view.h"

namespace cilkprof::agent::ompt {
namespace {

volatile uint32_t g_workers = 0;  // atomic accesses
volatile uint32_t g_working = 0;  // atomic accesses

cilkprof_worker_t* CurrentWorker() {
  OmpThread* t = CurrentOmpThread();
  return t != nullptr ? &t->worker : nullptr;
}

const cilkprof_runtime_t g_view = {CILKPROF_RUNTIME_ABI_VERSION, kOmptRuntimeName, &g_workers, &g_working,
                                   CurrentWorker};

// libomp's executable segments, written once before the view is published (release
// store in AttachRuntime), read by the handler after its acquire load of the view.
constexpr uint32_t kMaxRanges = 8;
uintptr_t g_lo[kMaxRanges];
uintptr_t g_hi[kMaxRanges];
uint32_t g_range_count = 0;

struct Search {
  uintptr_t address;
  uint32_t count;
  uintptr_t lo[kMaxRanges], hi[kMaxRanges];
};

int FindModule(struct dl_phdr_info* info, size_t, void* arg) {
  auto* search = static_cast<Search*>(arg);
  Search found{search->address, 0, {}, {}};
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const uintptr_t hi = lo + ph.p_memsz;
    if (search->address >= lo && search->address < hi) holds = true;
    if (found.count < kMaxRanges) {
      found.lo[found.count] = lo;
      found.hi[found.count] = hi;
      ++found.count;
    }
  }
  if (!holds) return 0;
  *search = found;
  return 1;
}

}  // namespace

bool AttachOmptRuntime(const void* libomp_address) {
  Search search{reinterpret_cast<uintptr_t>(libomp_address), 0, {}, {}};
  if (libomp_address != nullptr) dl_iterate_phdr(FindModule, &search);
  if (g_range_count == 0) {  // a second initialize (never in libomp) keeps the first
    for (uint32_t i = 0; i < search.count; ++i) {
      g_lo[i] = search.lo[i];
      g_hi[i] = search.hi[i];
    }
    g_range_count = search.count;
  }
  ElideModuleOf(libomp_address);
  AttachRuntime(&g_view);  // also elides the module of CurrentWorker: the agent's own
  return search.count > 0;
}

const cilkprof_runtime_t* OmptRuntimeView() { return &g_view; }

bool IsOmptOverheadPc(const cilkprof_runtime_t* runtime, uintptr_t pc) {
  if (runtime != &g_view) return false;
  for (uint32_t i = 0; i < g_range_count; ++i) {
    if (pc >= g_lo[i] && pc < g_hi[i]) return true;
  }
  return false;
}

void AddWorkers(int32_t delta) {
  __atomic_fetch_add(&g_workers, static_cast<uint32_t>(delta), __ATOMIC_RELAXED);
}

void AddWorking(int32_t delta) {
  __atomic_fetch_add(&g_working, static_cast<uint32_t>(delta), __ATOMIC_RELAXED);
}

void SetCounts(uint32_t workers, uint32_t working) {
  __atomic_store_n(&g_workers, workers, __ATOMIC_RELAXED);
  __atomic_store_n(&g_working, working, __ATOMIC_RELAXED);
}

}  // namespace cilkprof::agent::ompt
